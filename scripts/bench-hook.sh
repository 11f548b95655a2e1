#!/usr/bin/env bash
# Benchmarks (figures, not pass/fail):
#  1. `snip hook claude-code` as a whole process on a ~50 KB Bash PostToolUse payload
#     (store writes and ledger included) against `cat` on the same payload: each
#     spawned directly (posix_spawn, stdin from the payload file), all of them in
#     turn so that a noisy neighbour hits each alike; medians of wall time, CPU time
#     and page faults. Three builds of snip, all with the `dist` profile: dynamic and
#     portable (what a plain `cargo install` gives, with its profile), and on
#     *-linux-gnu, compiled for this machine's CPU, static-pie (scripts/install.sh
#     --pie) and static no-pie (what scripts/install.sh builds by default). With
#     hyperfine (Debian package) also its figures for the dynamic build.
#  2. `snip` itself (the filter, storing included) the same way on the payload's
#     `stdout`: the 50 KB `cargo test` log as plain text.
#  3. The MCP `snip_restore` round trip over an open session (Python `mcp` client).
# Installs the Python client into .venv-mcp/ when missing; MCP=0 leaves part 3 out.
#
# Beside `cat`, the floor of any Rust program here: `hello`, a static Rust program
# built with the flags of the `dist` build that reads stdin to its end and writes
# `{}` (the hook's reply to a payload it leaves alone). BASE=PATH adds that snip
# binary (e.g. one built from main) to the same interleaved runs, as `base`. Figures:
# medians with the 25th-75th percentiles of wall time, medians of CPU time and of
# minor page faults (`ru_minflt`).
#
#   scripts/bench-hook.sh --payload FILE
# writes the benchmark's payload (part 1) to FILE and exits.
#
#   scripts/bench-hook.sh --compare OLD NEW
# checks instead that two snip binaries answer alike: `snip` (store off) at budgets
# 24576, 12000 and 4000 on every file of fixtures/corpus and fixtures/corpus-new, and
# `snip hook claude-code` on a Bash payload built from each file (as below) at budgets
# 24576 and 4000, store ids masked. Exits 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."

# A Bash PostToolUse payload whose stdout is the text of file $1, written to $2.
payload_of() {
    python3 - "$1" "$2" <<'PY'
import json, sys
log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
payload = {"session_id": "bench", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "cargo test"},
           "tool_response": {"stdout": log, "stderr": "", "interrupted": False, "isImage": False}}
open(sys.argv[2], "w").write(json.dumps(payload))
PY
}

# The payload of part 1: `cargo test`'s failing log (52,144 bytes of JSON).
BENCH_LOG=fixtures/corpus/cargo-test-fail-notty.txt
if [ "${1:-}" = "--payload" ]; then
    payload_of "$BENCH_LOG" "$2"
    exit 0
fi

if [ "${1:-}" = "--compare" ]; then
    old="$2" new="$3"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    checked=0 differ=0
    for f in fixtures/corpus/*.txt fixtures/corpus-new/*.txt; do
        for b in 24576 12000 4000; do
            SNIP_STORE=0 SNIP_MAX_BYTES=$b "$old" < "$f" > "$work/a" 2> "$work/a.err" || true
            SNIP_STORE=0 SNIP_MAX_BYTES=$b "$new" < "$f" > "$work/b" 2> "$work/b.err" || true
            checked=$((checked + 1))
            if ! cmp -s "$work/a" "$work/b" || ! cmp -s "$work/a.err" "$work/b.err"; then
                echo "differs: snip at SNIP_MAX_BYTES=$b on $f"
                differ=$((differ + 1))
            fi
        done
        payload_of "$f" "$work/payload.json"
        for b in 24576 4000; do
            for side in old new; do
                SNIP_STORE_DIR="$work/store-$side" SNIP_MAX_BYTES=$b "${!side}" hook claude-code \
                    < "$work/payload.json" | sed 's/sn_[0-9a-f]*/sn_ID/g' > "$work/$side"
            done
            checked=$((checked + 1))
            if ! cmp -s "$work/old" "$work/new"; then
                echo "differs: snip hook claude-code at SNIP_MAX_BYTES=$b on $f"
                differ=$((differ + 1))
            fi
        done
    done
    echo "$checked outputs compared, $differ differ"
    [ "$differ" = 0 ]
    exit
fi

RUNS="${RUNS:-300}"
# Every build with the `dist` profile, as scripts/install.sh builds.
cargo build --quiet --locked --profile dist -p snip-cli --bin snip
SNIP="$PWD/target/dist/snip"
builds=("dynamic=$SNIP")
host="$(rustc -vV | sed -n 's/^host: //p')"
case "$host" in
    *-linux-gnu)
        # The flags of scripts/install.sh (--pie, then its default), its code layout
        # included (fields separated by 0x1f: the path may hold spaces); an explicit
        # --target keeps them off build scripts and proc-macros.
        layout=$'\x1f-C\x1flink-arg=-Wl,-T,'"$PWD/scripts/hook-layout.ld"
        CARGO_ENCODED_RUSTFLAGS=$'-C\x1ftarget-feature=+crt-static\x1f-C\x1ftarget-cpu=native'"$layout" \
            cargo build --quiet --locked --profile dist -p snip-cli --bin snip --target "$host"
        builds+=("static=$PWD/target/$host/dist/snip")
        CARGO_ENCODED_RUSTFLAGS=$'-C\x1ftarget-feature=+crt-static\x1f-C\x1frelocation-model=static\x1f-C\x1ftarget-cpu=native'"$layout" \
            CARGO_TARGET_DIR=target/no-pie \
            cargo build --quiet --locked --profile dist -p snip-cli --bin snip --target "$host"
        builds+=("static-no-pie=$PWD/target/no-pie/$host/dist/snip")
        ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SNIP_STORE_DIR="$work/store"

payload_of "$BENCH_LOG" "$work/payload.json"
if [ -n "${BASE:-}" ]; then
    builds+=("base=$BASE")
fi
# Each binary runs from a copy, as `cargo install` copies it: one just written by the
# linker took ~12 more page faults per run here (how its pages sit in the page cache).
for k in "${!builds[@]}"; do
    name="${builds[$k]%%=*}"
    cp "${builds[$k]#*=}" "$work/snip-$name"
    builds[$k]="$name=$work/snip-$name"
done
SNIP="$work/snip-dynamic"
# The floor: a static Rust program (as the `dist` build is, where the host allows it)
# that only reads stdin and writes `{}`.
cat > "$work/hello.rs" <<'RS'
use std::io::{Read, Write};
fn main() {
    let mut input = Vec::with_capacity(64 * 1024);
    let _ = std::io::stdin().lock().read_to_end(&mut input);
    let _ = std::io::stdout().lock().write_all(b"{}\n");
}
RS
hello_flags=(-C opt-level=3 -C lto=fat -C codegen-units=1)
case "$host" in
    *-linux-gnu) hello_flags+=(-C target-feature=+crt-static --target "$host") ;;
esac
rustc "${hello_flags[@]}" "$work/hello.rs" -o "$work/hello"
echo "payload: $(wc -c < "$work/payload.json") bytes"
"$SNIP" hook claude-code < "$work/payload.json" > "$work/reply.json"
echo "reply:   $(wc -c < "$work/reply.json") bytes"

if command -v hyperfine >/dev/null && hyperfine --help | grep -q -- '--input'; then
    hyperfine -N --warmup 30 --runs "$RUNS" --export-json "$work/hf.json" \
        --input "$work/payload.json" "cat" "$SNIP hook claude-code" >/dev/null
    python3 - "$work/hf.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
cat = [v for k, v in r.items() if k.startswith("cat")][0]["median"] * 1000
hook = [v for k, v in r.items() if "hook" in k][0]["median"] * 1000
print(f"hyperfine median: cat {cat:.3f} ms, snip hook claude-code (dynamic) {hook:.3f} ms, ratio {hook / cat:.2f}x")
PY
fi

# Each command spawned directly (posix_spawn: no shell in between), in turn; for a
# process this short page faults are time (docs/benchmark.md, "Design measurements").
spawned() { # INPUT LABEL ARGS... (after each build's path), then builds
    python3 - "$RUNS" "$@" <<'PY'
import os, statistics, sys, time
runs, stdin, label = int(sys.argv[1]), sys.argv[2], sys.argv[3]
args = sys.argv[4].split() if sys.argv[4] else []
cmds = {"cat": ["/bin/cat"], "hello (static Rust, reads stdin)": [os.environ["HELLO"]]}
for b in sys.argv[5:]:
    name, path = b.split("=", 1)
    cmds[f"{label} ({name})"] = [path, *args]
res = {k: [] for k in cmds}
null = os.open(os.devnull, os.O_WRONLY)
for r in range(runs + 20):
    for name, argv in cmds.items():
        fd = os.open(stdin, os.O_RDONLY)
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0), (os.POSIX_SPAWN_DUP2, null, 1)])
        _, status, ru = os.wait4(pid, 0)
        wall = (time.perf_counter_ns() - t0) / 1e6
        os.close(fd)
        if status != 0:
            sys.exit(f"{name} exited with {status}")
        if r >= 20:  # warm-up
            res[name].append((wall, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt))
med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in res.items()}
quart = {k: statistics.quantiles([x[0] for x in v], n=4) for k, v in res.items()}
cat = med["cat"][0]
print(f"spawned in turn on {os.path.getsize(stdin)} bytes, {runs} runs each, medians:")
for k, (wall, cpu, faults) in med.items():
    q1, _, q3 = quart[k]
    print(f"  {k:42s} wall {wall:.3f} ms ({q1:.3f}-{q3:.3f})  cpu {cpu:.3f} ms  {faults:4.0f} faults  {wall / cat:.2f}x cat")
PY
}
export HELLO="$work/hello"
spawned "$work/payload.json" "snip hook claude-code" "hook claude-code" "${builds[@]}"
cp fixtures/corpus/cargo-test-fail-notty.txt "$work/log.txt"
spawned "$work/log.txt" "snip (filter)" "" "${builds[@]}"

if [ "${MCP:-1}" = 0 ]; then
    exit 0
fi
VENV=.venv-mcp
if ! "$VENV/bin/python" -c "import mcp" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "pytest>=8"
fi
id="$(grep -o 'sn_[0-9a-f]*' "$work/reply.json" | head -1)"
"$VENV/bin/python" tests/mcp/bench_restore.py "$SNIP" "$SNIP_STORE_DIR" "$id" 500
