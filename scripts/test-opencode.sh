#!/usr/bin/env bash
# OpenCode for real: installs `opencode-ai` from the npm registry into .npm-opencode/
# (reused when present), builds snip, and runs tests/opencode/run.sh: `snip install
# opencode` in a temporary project, `opencode mcp list` reporting the snip server
# connected, the plugin loaded, and a byte-for-byte uninstall.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENCODE_VERSION="1.18.33"
PREFIX=.npm-opencode
OPENCODE="$PWD/$PREFIX/node_modules/.bin/opencode"
if [ "$("$OPENCODE" --version 2>/dev/null || true)" != "$OPENCODE_VERSION" ]; then
    mkdir -p "$PREFIX"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "opencode-ai@$OPENCODE_VERSION"
fi

cargo build --quiet -p snip-cli
OPENCODE="$OPENCODE" SNIP_BIN="$PWD/target/debug/snip" tests/opencode/run.sh
