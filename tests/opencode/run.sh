#!/usr/bin/env bash
# Checks `snip install opencode` against the real OpenCode binary, in a temporary
# project with its own HOME/XDG directories. Called by scripts/test-opencode.sh with
# OPENCODE and SNIP_BIN set; prints one line per check and a closing summary.
set -euo pipefail

: "${OPENCODE:?path to the opencode binary}"
: "${SNIP_BIN:?path to the snip binary}"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"

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
strip_ansi() { sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g'; }

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

mcp_list() { "$OPENCODE" mcp list 2>&1 | strip_ansi | tee "$work/mcp-list.txt"; }
check "opencode mcp list: snip connected" bash -c "$(declare -f mcp_list strip_ansi); OPENCODE='$OPENCODE' work='$work' mcp_list | grep -E '✓ snip .*connected|snip.*connected'"
check "opencode loads the plugin" bash -c "'$OPENCODE' debug config 2>/dev/null | grep -q '.opencode/plugin/snip.ts'"

# The filter the plugin runs on every tool output.
log="$REPO/fixtures/corpus/cargo-test-fail-notty.txt"
check "plugin filter shortens a long output and marks it" bash -c "
  out=\$('$SNIP_BIN' hook opencode --tool bash < '$log')
  [ \${#out} -lt \$(wc -c < '$log') ] && grep -q '\[snip: ' <<<\"\$out\""
check "plugin filter leaves a short output alone" bash -c "[ \"\$(printf 'ok\n' | '$SNIP_BIN' hook opencode --tool bash)\" = ok ]"
check "ledger names the OpenCode tool" grep -q '"opencode:bash"' "$SNIP_STORE_DIR/ledger.jsonl"

check "snip uninstall opencode --scope project" "$SNIP_BIN" uninstall opencode --scope project
check "opencode.jsonc restored byte for byte" cmp opencode.jsonc "$work/original.jsonc"
check "plugin file removed" test ! -e .opencode/plugin/snip.ts
check "opencode mcp list: snip gone" bash -c "! '$OPENCODE' mcp list 2>&1 | grep -q 'snip'"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
