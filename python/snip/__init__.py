"""snip: make AI agents' tool output small without losing what matters.

The Rust core runs in-process (the ``snip._native`` extension, built by maturin from
``crates/snip-py``). Every function reads its configuration from the ``SNIP_*``
environment variables on every call, the same ones the ``snip`` CLI reads; keyword
options override one variable for one call (``max_bytes=4096`` is
``SNIP_MAX_BYTES=4096``, ``store=False`` is ``SNIP_STORE=0``).

Originals of lossy rewrites go to the local store: ``$SNIP_STORE_DIR``, else
``$HERMES_HOME/cache/snip``, else the XDG cache directory. Every marker quotes the
``snip_restore(...)`` call that gets its bytes back, which :func:`restore` answers.

The functions release the GIL while Rust works and never let a Rust panic reach
Python: a failure returns the original (``changed`` false, ``failed_open`` set).
"""

from __future__ import annotations

import atexit
import json
import re
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._native import ConfigDict, Receipt, RestoreResponse

_native: ModuleType | None
_NATIVE_ERROR: ImportError | None
try:
    from . import _native
except ImportError as _exc:  # not built, or built for another platform
    _native = None
    _NATIVE_ERROR = _exc
else:
    _NATIVE_ERROR = None

__all__ = [
    "compress",
    "compress_messages",
    "config",
    "flush",
    "native_available",
    "over_budget",
    "restore",
    "runs_snip_restore",
]

__version__: str = getattr(_native, "__version__", "0+unknown")


def native_available() -> bool:
    """Whether the Rust core loaded (``False`` when the extension is missing)."""
    return _native is not None


def _core() -> ModuleType:
    """The extension module, or ImportError saying why it is unavailable."""
    if _native is None:
        raise ImportError(
            "snip's native core is not available (reinstall with `pip install ./python`)"
        ) from _NATIVE_ERROR
    return _native


def compress(text: str | bytes, **opts: Any) -> Receipt:
    """Compresses one tool output and returns the receipt.

    ``text`` is the output as ``str`` (compressed as its UTF-8 bytes) or ``bytes``
    (which may be invalid UTF-8); ``output`` in the receipt has the same type.

    Receipt keys: ``output``, ``changed``, ``original_bytes`` and ``output_bytes``
    (sizes in bytes of UTF-8), ``rules`` (``[{"id": rule_id, count_name: n, ...}]`` in
    execution order), ``id`` (store id of the retained original, or ``None``),
    ``retained`` (whether ``id`` is set), ``lossy``, ``retention`` (``"retained"``,
    ``"off"``, ``"failed"`` or ``None`` when the store was not asked),
    ``retention_error`` and ``failed_open`` (why the call returned its input, or
    ``None``).

    The engine is the ``snip`` CLI's for the same bytes on stdin, with the same output:
    up to the in-memory cap (the store's entry cap, ``SNIP_STORE_MAX_ENTRY_BYTES``,
    32 MiB by default, at least 16 MiB and at most 64 MiB; 16 MiB with the store off)
    the whole pipeline runs and the original is kept; a longer input that is not a
    JSON document is compressed as a stream over the caller's bytes (memory: the
    input plus a few MiB), its markers cite no id, ``rules`` carry ids only, and
    ``retention`` is ``"failed"`` (``"off"`` with the store off) when lines were elided.

    Options: any ``SNIP_*`` variable of the core or the store in lower case without
    the prefix (``max_bytes``, ``head_bytes``, ``store``, ``store_dir``, ...), and
    ``source``: a label for the savings ledger (default ``"python"``).
    Raises ``TypeError`` for an unknown option and ``ImportError`` when the native
    core is missing; everything else fails open.
    """
    return _core().compress(text, **opts)  # type: ignore[no-any-return]


def flush() -> None:
    """Writes now what the store still holds: the originals of calls that just
    returned and their ledger rows.

    A call that keeps an original returns its id at once and holds the bytes in
    memory; a thread of the module's own writes them right after (to a temp file
    renamed into place, as the ``snip`` CLI writes) and appends the call's ledger row.
    :func:`restore` in this process reads a held original from memory, so nothing
    needs this but a reader of the store's files or another process that must see
    them at once (``snip stats``, ``snip restore`` run within the same millisecond).
    Registered to run at interpreter exit. Never raises: an original that cannot be
    written stays held, restorable from this process.
    """
    if _native is not None:
        _native.flush()


# The store writes an original on a thread of its own right after the call that keeps
# it (the call returns first): whatever is still held is written at exit.
atexit.register(flush)


def restore(
    id: str,
    mode: str | None = None,
    *,
    start: int | None = None,
    end: int | None = None,
    query: str | None = None,
    field: str | None = None,
    max_bytes: int | None = None,
    context: int | None = None,
    align: str | None = None,
    **opts: Any,
) -> RestoreResponse:
    """Answers a restore call: one bounded slice of a retained original.

    ``mode``: ``"bytes"`` (default; ``start``/``end`` 0-based, end exclusive),
    ``"lines"`` (1-based, inclusive), ``"search"`` (literal ``query``, with line
    numbers and ``context`` lines around each match) or ``"full"``. ``field`` (a JSON
    pointer) scopes the call to one value of a JSON original; ``max_bytes`` caps the
    content (default ``SNIP_RECOVERY_MAX_BYTES``, 8,192; at most 65,536).
    ``align="token"`` (``bytes`` only) keeps tokens of up to 1,024 bytes whole at the
    page's ends.

    Returns the store's response as a dict: ``status`` (``ok``, ``not_found``,
    ``expired``, ``too_large``, ``invalid``, ``unavailable``, ``error``), ``content``,
    its range (``start``, ``end``), ``next`` (the ``start`` of the next page, or
    ``None``), ``total_bytes``, ``sha256`` and ``note``. Never raises for a bad
    request: it answers ``invalid``. ``opts`` override store variables
    (``store_dir=...``).
    """
    core = _core()
    try:
        return core.restore(  # type: ignore[no-any-return]
            id,
            mode,
            start=start,
            end=end,
            query=query,
            field=field,
            max_bytes=max_bytes,
            context=context,
            align=align,
            **opts,
        )
    except (TypeError, ValueError, OverflowError) as exc:
        # An argument the binding cannot convert (bytes for the id, a float, a number
        # past 64 bits): answered like any other bad request.
        return {
            "status": "invalid",
            "id": id if isinstance(id, str) else None,
            "content": None,
            "note": f"bad argument: {exc}",
        }


def over_budget(text: str) -> bool | None:
    """Whether ``text`` is over the budget the core resolves (``SNIP_MAX_BYTES``) in
    UTF-8 bytes (encoded only when its length in characters cannot tell), or ``None``
    when a setting does not parse: the core would then pass the text through."""
    try:
        budget = int(_core().config()["SNIP_MAX_BYTES"])
    except ValueError:
        return None
    n = len(text)
    return n > budget or (n * 4 > budget and len(text.encode("utf-8", "surrogatepass")) > budget)


def config(**opts: Any) -> ConfigDict:
    """The resolved settings as ``{variable: value}`` (values as strings), the same
    list ``snip config`` prints; ``SNIP_STORE_DIR`` is the bare path (``snip config``
    also says where it came from). Raises ``ValueError`` naming a variable whose value
    does not parse."""
    return _core().config(**opts)  # type: ignore[no-any-return]


def compress_messages(messages: list[Any], **settings: Any) -> list[Any]:
    """The conversation pass over one request's messages.

    Keeps the last ``keep_last`` tool results whole and replaces each older tool
    result of at least ``min_chars`` characters with a one-line summary that names the
    tool, its outcome, its size, its first and last meaningful line and the store id
    to restore it. Older results are released only when that pays at the provider's
    cache prices (the release rule of ``docs/context.md``), and a summary is
    byte-identical on every later call, so a provider's prompt cache keeps
    the prefix. System, user and assistant text is never touched.

    ``messages`` is an OpenAI chat (``role: "tool"`` with ``tool_call_id``) or
    Anthropic messages (``tool_use`` / ``tool_result`` blocks) list. Settings:
    ``format`` (``"openai"``, ``"anthropic"`` or ``"auto"``, the default), and the
    ``SNIP_CONTEXT_*`` variables in lower case without the prefix: ``enabled``,
    ``keep_last`` (6), ``min_messages`` (16), ``min_chars`` (300), ``batch`` (unset:
    the release rule; a number: a fixed batch), ``cache_write_pct`` (125),
    ``cache_read_pct`` (10), ``expected_calls`` (unset: learned);
    store variables (``store_dir=...``); and ``source``, the savings ledger's label
    for the request (default ``"python:context"``; one row per request that changed).

    Returns a new list when something was summarised, else ``messages`` itself.
    Malformed or unknown shapes, and any failure, return ``messages`` unchanged.
    ``TypeError`` for an unknown setting.
    """
    core = _core()
    try:
        text = json.dumps(messages, ensure_ascii=False)
    except (TypeError, ValueError):
        return messages
    out = core.compress_messages(text, **settings)
    if out is None:
        return messages
    try:
        new = json.loads(out)
    except ValueError:
        return messages
    return new if isinstance(new, list) else messages


# Splits a shell command into words for `runs_snip_restore`.
_WORD_SPLIT = re.compile(r"[\s;&|()`]+")


def runs_snip_restore(command: Any) -> bool:
    """True when a shell command runs ``snip restore`` (a word whose last path
    component is ``snip``, quotes aside, followed by ``restore``), the rule of the
    Claude Code hook and the OpenCode plugin. Its output is an original snip already
    gave back: compressing it again would hide it behind a new marker. A false
    positive only leaves an output as it is."""
    if not isinstance(command, str) or "restore" not in command:
        return False
    words = [w.strip("'\"") for w in _WORD_SPLIT.split(command)]
    words = [w for w in words if w]
    return any(
        nxt == "restore" and w.rsplit("/", 1)[-1] == "snip"
        for w, nxt in zip(words, words[1:], strict=False)
    )
