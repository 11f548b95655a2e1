"""snip for Hermes Agent, as a plugin folder (`hermes plugins install`).

The plugin itself lives in the `snip` Python package (`snip.hermes`), which carries
the Rust core; install it into Hermes's Python first (`pip install ./python`). Without
it this folder registers nothing and Hermes's output is unchanged.
"""

import logging

logger = logging.getLogger(__name__)


def register(ctx):
    """Registers snip's hooks, middleware and `snip_restore` tool with Hermes."""
    try:
        from snip.hermes import register as register_snip
    except Exception as exc:  # noqa: BLE001 - a missing package must not break Hermes
        logger.warning(
            "snip plugin: the `snip` package is not installed in this Python "
            "(pip install ./python from the snip repository): %s",
            exc,
        )
        return
    register_snip(ctx)
