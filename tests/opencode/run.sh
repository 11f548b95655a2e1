#!/usr/bin/env bash
# Checks `snip install opencode` and `snip uninstall opencode` in a temporary project
# with its own HOME/XDG directories, next to the real OpenCode binary. Called by scripts/test-opencode.sh with
# OPENCODE and SNIP_BIN set; prints one line per check and a closing summary.
set -euo pipefail

: "${OPENCODE:?path to the opencode binary}"
: "${SNIP_BIN:?path to the snip binary}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share"
export XDG_CACHE_HOME="$work/home/.cache" XDG_STATE_HOME="$work/home/.local/state"
export SNIP_STORE_DIR="$work/store" NO_COLOR=1
mkdir -p "$HOME" "$work/project"
cd "$work/project"
git init -q .

passed=0
failed=0
check() { # check NAME COMMAND...
    local name="$1"; shift
    if "$@" >"$work/check.log" 2>&1; then
        echo "ok   - $name"; passed=$((passed + 1))
    else
        echo "FAIL - $name"; sed 's/^/       /' "$work/check.log" | tail -20; failed=$((failed + 1))
    fi
}

cat > opencode.jsonc <<'JSONC'
{
  // project settings, comments must survive
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    /* nothing yet */
  },
}
JSONC
cp opencode.jsonc "$work/original.jsonc"

check "opencode runs ($("$OPENCODE" --version 2>/dev/null || echo '?'))" "$OPENCODE" --version
check "snip install opencode --scope project" "$SNIP_BIN" install opencode --scope project
check "comments kept in opencode.jsonc" grep -q "comments must survive" opencode.jsonc
check "second install changes nothing" bash -c "'$SNIP_BIN' install opencode --scope project | grep -q 'already installed'"

# That OpenCode loads the plugin (it rewrites a real bash output), connects to the MCP
# server (it routes the model's restore call to it) and runs the filter is shown by
# the live sessions of tests/live/test_opencode.py, which scripts/test-opencode.sh
# runs next; the filter itself by crates/snip-cli/tests/hook_opencode.rs. Starting
# OpenCode three more times here only to list the same things cost minutes of CI.

check "snip uninstall opencode --scope project" "$SNIP_BIN" uninstall opencode --scope project
check "opencode.jsonc restored byte for byte" cmp opencode.jsonc "$work/original.jsonc"
check "plugin file removed" test ! -e .opencode/plugin/snip.ts

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
