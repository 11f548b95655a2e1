#!/usr/bin/env bash
# Real hosts through the proxy: `snip wrap claude` (Claude Code), `snip wrap codex`
# (Codex CLI, Responses API) and `snip wrap opencode` (OpenCode, its built-in anthropic
# provider) against the scripted model on 127.0.0.1
# (tests/scripted_model/server.py), each under a temporary HOME and store, no hook
# installed. Hosts come from scripts/install-host.sh (reused when present). Runs
# tests/live/test_proxy.py with pytest from .venv-live/ (created when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE="$(scripts/install-host.sh claude-code)"
CODEX="$(scripts/install-host.sh codex)"
OPENCODE="$(scripts/install-host.sh opencode)"
VENV=.venv-live
if ! "$VENV/bin/python" -c "import pytest" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "pytest>=8"
fi
cargo build --quiet -p snip-cli
export CLAUDE CODEX OPENCODE SNIP_BIN="$PWD/target/debug/snip"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/live/test_proxy.py "$@"
