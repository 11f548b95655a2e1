#!/usr/bin/env bash
# End-to-end tests of `snip mcp` with the official Python MCP client (`mcp` on PyPI):
# list tools, restore in every mode, errors, both protocol eras (initialize handshake
# at 2025-11-25 and 2024-11-05; 2026-07-28 without a handshake).
# Installs the client into .venv-mcp/ (reused when present) and builds the binary.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION="2.3.0"
VENV=.venv-mcp
if ! "$VENV/bin/python" -c "import mcp, pytest, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" "pytest>=8"
fi

cargo build --quiet -p snip-cli
export SNIP_BIN="$PWD/target/debug/snip"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/mcp "$@"
