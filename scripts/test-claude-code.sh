#!/usr/bin/env bash
# Claude Code for real: live sessions of the pinned `claude` binary (installed by
# scripts/install-host.sh into .npm-claude-code/, reused when present) against the
# scripted model on 127.0.0.1 (tests/scripted_model/server.py), each under a
# temporary HOME and store. Runs tests/live/test_claude_code.py with pytest from
# .venv-live/ (created when missing). The last line is pytest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE="$(scripts/install-host.sh claude-code)"
VENV=.venv-live
if ! "$VENV/bin/python" -c "import pytest" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "pytest>=8"
fi
cargo build --quiet -p snip-cli
export CLAUDE SNIP_BIN="$PWD/target/debug/snip"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/live/test_claude_code.py "$@"
