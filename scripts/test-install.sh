#!/usr/bin/env bash
# scripts/install.sh works: installs `snip` (debug profile, to keep CI short) into a
# temporary root, checks that on *-linux-gnu it is statically linked, not
# position-independent and laid out by scripts/hook-layout.ld, and runs it as a user
# would: the filter with a store, restore by lines, `snip run`'s exit status, and the
# Claude Code hook on a Bash payload.
set -euo pipefail
cd "$(dirname "$0")/.."

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
bash scripts/install.sh --root "$root" --debug --bin snip --quiet
snip="$root/bin/snip"
fail() {
    echo "test-install: $*" >&2
    exit 1
}

host="$(rustc -vV | sed -n 's/^host: //p')"
case "$host" in
    *-linux-gnu)
        # ldd answers "statically linked" (static-pie) or "not a dynamic executable".
        linked="$(ldd "$snip" 2>&1 || true)"
        case "$linked" in
            *"statically linked"* | *"not a dynamic executable"*) ;;
            *) fail "expected a static binary on $host, ldd says: $linked" ;;
        esac
        # Not position-independent by default: ELF e_type (2 bytes at offset 16) is
        # ET_EXEC (2), not ET_DYN (3), so nothing is relocated at start-up.
        e_type="$(od -An -tu2 -j16 -N2 "$snip" | tr -d ' ')"
        [ "$e_type" = 2 ] || fail "expected a non-PIE executable (ELF type 2), found type $e_type"
        # Linked with scripts/hook-layout.ld: its output section is in the section
        # names (a NUL-terminated string of `.shstrtab`).
        grep -a -q -P '\.text\.snip\x00' "$snip" || fail "expected the code layout of scripts/hook-layout.ld (a .text.snip section)"
        ;;
esac
"$snip" --version | grep -q '^snip ' || fail "snip --version"

export SNIP_STORE_DIR="$root/store"
log="$root/build.log"
python3 -c 'print("\n".join(f"{i:05d} compiling module_{i} with flags -O2" for i in range(5000)))' >"$log"
out="$("$snip" <"$log")"
[ "${#out}" -lt "$(wc -c <"$log")" ] || fail "the filter did not shrink a 5,000-line log"
id="$(grep -o 'sn_[0-9a-f]*' <<<"$out" | head -1)"
[ -n "$id" ] || fail "no store id in the markers: $out"
[ "$("$snip" restore "$id" --lines 2:3 --raw)" = "$(sed -n 2,3p "$log")" ] ||
    fail "restore --lines 2:3 is not lines 2-3 of the original"

status=0
"$snip" run -- sh -c 'echo hi; exit 3' >/dev/null || status=$?
[ "$status" -eq 3 ] || fail "snip run gave status $status, not the command's 3"

python3 - "$snip" "$log" <<'PY'
import json, subprocess, sys
snip, log = sys.argv[1], sys.argv[2]
payload = {"session_id": "t", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "make"},
           "tool_response": {"stdout": open(log).read(), "stderr": "", "interrupted": False,
                             "isImage": False}}
r = subprocess.run([snip, "hook", "claude-code"], input=json.dumps(payload).encode(),
                   capture_output=True, check=True)
out = json.loads(r.stdout)["hookSpecificOutput"]["updatedToolOutput"]
assert "[snip:" in out["stdout"] and len(out["stdout"]) < len(payload["tool_response"]["stdout"]), out
PY
echo "test-install: ok ($host, $("$snip" --version))"
