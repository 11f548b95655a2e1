#!/usr/bin/env bash
# Peak resident memory of every path that holds an input, against the input's size:
# the real `snip` binary under GNU time (`/usr/bin/time -v`, "Maximum resident set
# size"), one process per case, with a temporary store.
#
#   filter     `snip < FILE` (in memory up to the store's entry cap, 32 MiB: the full
#              pipeline, the reduced path for long inputs), on a mixed log and on
#              `ESC[999Cx` lines (forward cursor moves: the emulator's worst class)
#   stream     `cat FILE | snip` past the in-memory cap: compressed as it arrives
#   hook       `snip hook claude-code` with a Bash payload whose stdout is the log
#              (up to 100 MB), and one whose persistedOutputPath names a 32 MiB file
#              (the longest the hook reads) of the log, then of `ESC[999Cx` lines
#   mcp        `snip mcp` given one `tools/call` line of N bytes (a search query
#              padded with blanks inside the JSON) after the handshake
#
# Not part of CI (it writes a few hundred MB of inputs; a few minutes on 2 cores).
#
#   scripts/bench-memory.sh [SIZES_MB...]   # default: 1 4 16 (the hook also 100)
#   SNIP=path/to/snip scripts/bench-memory.sh   # a given binary (else a release build)
#
# Prints one row per case: path, input bytes, peak RSS (KiB), and peak RSS per input
# byte over the baseline (`snip --version`'s peak RSS).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ -x /usr/bin/time ]] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1 4 16)

if [[ -z "${SNIP:-}" ]]; then
  cargo build --release -q -p snip-cli
  SNIP="${CARGO_TARGET_DIR:-target}/release/snip"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SNIP_STORE_DIR="$work/store"   # never touch the user's store or ledger

peak() { # peak RSS (KiB) of the command given, stdin from $in
  /usr/bin/time -v -o "$work/time" "$@" <"$in" >/dev/null 2>"$work/err" || true
  awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time"
}
in=/dev/null
base=$(peak "$SNIP" --version)
printf '%-22s %12s %12s %10s\n' path input_bytes peak_rss_kib per_byte
row() { # name bytes kib
  printf '%-22s %12s %12s %10s\n' "$1" "$2" "$3" \
    "$(awk -v k="$3" -v b="$base" -v n="$2" 'BEGIN { printf "%.2f", (k - b) * 1024 / n }')"
}
printf '%-22s %12s %12s %10s\n' baseline 0 "$base" -

log() { # FILE MB: a mixed log of distinct lines, an error now and then
  python3 - "$1" "$2" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    n, i = 0, 0
    while n < mb << 20:
        i += 1
        line = (f"2026-12-01T00:00:{i % 60:02d}Z INFO worker={i % 7} processed batch id={i} in {i % 97} ms\n"
                if i % 500 else f"ERROR worker={i % 7} failed: connection reset (batch {i})\n")
        f.write(line); n += len(line)
PY
}

for mb in "${sizes[@]}"; do
  log "$work/log" "$mb"
  in="$work/log"; row "filter log" "$(stat -c %s "$in")" "$(peak "$SNIP")"
  python3 -c "import sys; sys.stdout.buffer.write(b'\x1b[999Cx\n' * ($mb * 2**20 // 8))" >"$work/fwd"
  in="$work/fwd"; row "filter ESC[999Cx" "$(stat -c %s "$in")" "$(peak "$SNIP")"
done

# Past the in-memory cap (32 MiB): streamed.
log "$work/big" 64
in="$work/big"; row "stream (cat | snip)" "$(stat -c %s "$in")" "$(peak sh -c "cat | '$SNIP'")"

hook_payload() { # FILE: a PostToolUse Bash payload with the log as stdout
  python3 - "$1" "$2" <<'PY'
import json, sys
text = open(sys.argv[2]).read()
json.dump({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "make"},
           "tool_response": {"stdout": text, "stderr": "", "interrupted": False}},
          open(sys.argv[1], "w"))
PY
}
for mb in "${sizes[@]}" 100; do
  log "$work/log" "$mb"
  hook_payload "$work/payload" "$work/log"
  in="$work/payload"; row "hook payload" "$(stat -c %s "$in")" "$(peak "$SNIP" hook claude-code)"
done
log "$work/persisted" 32
head -c $((32 << 20)) "$work/persisted" >"$work/persisted.32" && mv "$work/persisted.32" "$work/persisted"
python3 - "$work/payload" "$work/persisted" <<'PY'
import json, sys
json.dump({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "make"},
           "tool_response": {"stdout": "preview", "stderr": "", "interrupted": False,
                             "persistedOutputPath": sys.argv[2], "persistedOutputSize": 1}},
          open(sys.argv[1], "w"))
PY
in="$work/payload"; row "hook persisted file" "$(stat -c %s "$work/persisted")" "$(peak "$SNIP" hook claude-code)"
# The same 32 MiB file of forward cursor moves.
python3 -c "import sys; sys.stdout.buffer.write(b'\x1b[999Cx\n' * (32 * 2**20 // 8))" >"$work/persisted"
row "hook persisted ESC" "$(stat -c %s "$work/persisted")" "$(peak "$SNIP" hook claude-code)"

for mb in "${sizes[@]}"; do
  python3 - "$work/mcp" "$mb" <<'PY'
import json, sys
init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "snip_restore", "arguments": {"id": "sn_0123456789abcdef01234567", "mode": "search", "query": "x"}}})
pad = int(sys.argv[2]) * 2**20 - len(call)
call = call[:-1] + " " * max(pad, 0) + "}"
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(init) + "\n" + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n" + call + "\n")
PY
  in="$work/mcp"; row "mcp request line" "$(stat -c %s "$in")" "$(peak "$SNIP" mcp)"
done
