#!/usr/bin/env bash
# Speed where users feel it (figures, not pass/fail). Every figure is printed next to
# its reference measured in the same run, the runs interleaved (A B A B ...), so a
# noisy machine shows as a wide spread rather than as a false win. Medians; min and
# max beside them.
#
#  1. `snip < FILE` and `cat FILE | snip` on a generated mixed log of SIZE_MB (default
#     128) MB against `cat FILE` (MB/s and the ratio to cat's time), and the peak RSS
#     of each (/usr/bin/time -f %M, KiB); the CPU time (user + system) of each, which
#     a busy machine does not inflate as it does wall time.
#  2. With BIG=1: a 2 GiB pipe (the log repeated) through `snip`: peak RSS.
#  3. `snip hook claude-code` on a ~50 KB Bash PostToolUse payload, whole process,
#     against `cat` of the same payload: RUNS (default 41) interleaved runs.
#  4. With a Python that imports `snip` (PYTHON, default .venv-hermes/bin/python):
#     scripts/bench-python.py (snip.compress() on the 26 captures cut to 50,000 bytes).
#
# Usage: scripts/bench-speed.sh [SNIP_BINARY]   (default: target/release/snip, built)
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MB="${SIZE_MB:-128}"
RUNS="${RUNS:-41}"
FILE_RUNS="${FILE_RUNS:-7}"
if [ $# -ge 1 ]; then
    SNIP="$1"
else
    cargo build --quiet --release -p snip-cli --bin snip
    SNIP="$PWD/target/release/snip"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SNIP_STORE_DIR="$work/store"

# A mixed log: build lines, ANSI colour, progress redraws, repeats, JSON lines and a
# few errors, deterministic.
log="$work/mixed.log"
python3 - "$log" "$SIZE_MB" <<'EOF'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
parts, size, i = [], 0, 0
while size < mb * 1_000_000:
    i += 1
    k = i % 50
    if k == 0:
        s = f"\x1b[1;31merror[E{i % 997:04}]\x1b[0m: mismatched types in src/mod_{i % 89}.rs:{i % 700}\n"
    elif k < 5:
        s = f"\r[{'#' * (i % 40):<40}] {i % 100}%"
    elif k < 12:
        s = "    Compiling serde v1.0.219\n"
    elif k < 20:
        s = f'{{"ts":{1700000000 + i},"level":"info","msg":"request {i} served","ms":{i % 97}}}\n'
    else:
        s = f"2026-12-01T10:{i // 60 % 60:02}:{i % 60:02}Z worker-{i % 7} processed item {i} in {i % 313} ms\n"
    parts.append(s)
    size += len(s)
with open(path, "w") as f:
    f.write("".join(parts))
EOF
bytes=$(stat -c %s "$log")
echo "input: mixed log, $bytes bytes; snip: $SNIP; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# median MIN MAX of the numbers on stdin
stats() { sort -n | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
now() { date +%s%N; }

# 1. A file on stdin and a pipe, against cat.
: >"$work/t.cat"; : >"$work/t.file"; : >"$work/t.pipe"; : >"$work/t.catpipe"
cat "$log" >/dev/null # warm the page cache
for _ in $(seq "$FILE_RUNS"); do
    a=$(now); cat "$log" >/dev/null; b=$(now); echo $(((b - a) / 1000)) >>"$work/t.cat"
    a=$(now); "$SNIP" <"$log" >/dev/null; b=$(now); echo $(((b - a) / 1000)) >>"$work/t.file"
    a=$(now); cat "$log" | cat >/dev/null; b=$(now); echo $(((b - a) / 1000)) >>"$work/t.catpipe"
    a=$(now); cat "$log" | "$SNIP" >/dev/null; b=$(now); echo $(((b - a) / 1000)) >>"$work/t.pipe"
done
report() { # name file reference-file
    read -r m lo hi < <(stats <"$2")
    read -r r _ _ < <(stats <"$3")
    awk -v n="$1" -v m="$m" -v lo="$lo" -v hi="$hi" -v r="$r" -v b="$bytes" 'BEGIN {
        printf "%-28s median %8.1f ms (min %.1f, max %.1f)  %7.0f MB/s  = %.2fx the reference (%.1f ms)\n",
            n, m / 1000, lo / 1000, hi / 1000, b / m, m / r, r / 1000 }'
}
echo "== big input, $FILE_RUNS interleaved runs (wall time) =="
report "cat FILE" "$work/t.cat" "$work/t.cat"
report "snip < FILE (vs cat FILE)" "$work/t.file" "$work/t.cat"
report "cat FILE | cat" "$work/t.catpipe" "$work/t.catpipe"
report "cat FILE | snip (vs |cat)" "$work/t.pipe" "$work/t.catpipe"

# CPU time (user + system, ms) of the last command of each run, the same runs
# interleaved: on a shared machine wall time also counts the waits for a core; CPU time
# counts only the work, so it is the figure to compare across runs.
cpu() { /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%d\n", ($1 + $2) * 1000}'; }
: >"$work/c.cat"; : >"$work/c.file"; : >"$work/c.pipe"
for _ in $(seq "$FILE_RUNS"); do
    cpu cat "$log" >>"$work/c.cat"
    cpu "$SNIP" <"$log" >>"$work/c.file"
    cat "$log" | cpu "$SNIP" >>"$work/c.pipe"
done
cpu_report() { # name file
    read -r m lo hi < <(stats <"$2")
    awk -v n="$1" -v m="$m" -v lo="$lo" -v hi="$hi" -v b="$bytes" 'BEGIN {
        if (m > 0) r = sprintf("%7.0f MB/s of CPU", b / m / 1000); else r = "";
        printf "%-28s median %6d ms (min %d, max %d)  %s\n", n, m, lo, hi, r }'
}
echo "== CPU time (user + system, 10 ms ticks), $FILE_RUNS interleaved runs =="
cpu_report "cat FILE" "$work/c.cat"
cpu_report "snip < FILE" "$work/c.file"
cpu_report "cat FILE | snip (snip only)" "$work/c.pipe"

rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
echo "== peak RSS (KiB) =="
echo "cat FILE:          $(rss cat "$log")"
echo "snip < FILE:       $(rss "$SNIP" <"$log")"
echo "cat FILE | snip:   $(cat "$log" | rss "$SNIP")"
if [ "${BIG:-0}" = 1 ]; then
    n=$(((2147483648 + bytes - 1) / bytes))
    echo "2 GiB pipe | snip: $(for _ in $(seq "$n"); do cat "$log"; done | head -c 2147483648 | rss "$SNIP")"
fi

# 3. The hook, whole process, against cat of the same payload.
payload="$work/payload.json"
python3 - "$payload" <<'EOF'
import json, sys
lines = []
i = 0
while sum(map(len, lines)) < 50_000:
    i += 1
    lines.append(f"test tests::case_{i:05} ... ok\n" if i % 97 else f"test tests::case_{i:05} ... FAILED\n")
print(json.dumps({
    "session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
    "hook_event_name": "PostToolUse", "tool_name": "Bash",
    "tool_input": {"command": "cargo test"},
    "tool_response": {"stdout": "".join(lines), "stderr": "", "interrupted": False},
}), file=open(sys.argv[1], "w"))
EOF
: >"$work/h.cat"; : >"$work/h.snip"
"$SNIP" hook claude-code <"$payload" >/dev/null # warm-up (creates the store)
for _ in $(seq "$RUNS"); do
    a=$(now); cat "$payload" >/dev/null; b=$(now); echo $(((b - a) / 1000)) >>"$work/h.cat"
    a=$(now); "$SNIP" hook claude-code <"$payload" >/dev/null; b=$(now); echo $(((b - a) / 1000)) >>"$work/h.snip"
done
echo "== hook on a $(stat -c %s "$payload") byte payload, $RUNS interleaved runs (wall, µs; includes the shell's fork+exec) =="
read -r cm clo chi < <(stats <"$work/h.cat")
read -r sm slo shi < <(stats <"$work/h.snip")
echo "cat payload:           median $cm µs (min $clo, max $chi)"
echo "snip hook claude-code: median $sm µs (min $slo, max $shi) = $(awk -v a="$sm" -v b="$cm" 'BEGIN{printf "%.2f", a/b}')x cat"

# 4. Python, when the module is importable.
PYTHON="${PYTHON:-.venv-hermes/bin/python}"
if [ -x "$PYTHON" ] && "$PYTHON" -c 'import snip' 2>/dev/null; then
    echo "== Python =="
    "$PYTHON" scripts/bench-python.py
else
    echo "== Python: skipped ($PYTHON cannot import snip; scripts/test-hermes.sh builds it) =="
fi
