#!/usr/bin/env bash
# OpenCode for real: installs `opencode-ai` from the npm registry into .npm-opencode/
# (scripts/install-host.sh; reused when present), builds snip, and runs
#   1. tests/opencode/run.sh: `snip install opencode` in a temporary project,
#      `opencode mcp list` reporting the snip server connected, the plugin loaded,
#      and a byte-for-byte uninstall;
#   2. tests/live/test_opencode.py (pytest, from .venv-live/): live `opencode run`
#      sessions against the scripted model on 127.0.0.1, with and without snip.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENCODE="$(scripts/install-host.sh opencode)"
VENV=.venv-live
if ! "$VENV/bin/python" -c "import pytest" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "pytest>=8"
fi

cargo build --quiet -p snip-cli
export OPENCODE SNIP_BIN="$PWD/target/debug/snip"
tests/opencode/run.sh
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/live/test_opencode.py "$@"
