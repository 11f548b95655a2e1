#!/usr/bin/env bash
# Benchmarks (figures, not pass/fail):
#  1. `snip hook claude-code` as a whole process on a ~50 KB Bash PostToolUse payload
#     (store writes and ledger included) against `cat` on the same payload: each
#     spawned directly (posix_spawn, stdin from the payload file), all of them in
#     turn so that a noisy neighbour hits each alike; medians of wall time, CPU time
#     and page faults. Three builds of snip, all with the `dist` profile: dynamic
#     (scripts/install.sh --dynamic), and on *-linux-gnu static-pie and static no-pie
#     (what scripts/install.sh builds, by default and with --no-pie). With hyperfine (Debian package) also its figures
#     for the dynamic build.
#  2. `snip` itself (the filter, storing included) the same way on the payload's
#     `stdout`: the 50 KB `cargo test` log as plain text.
#  3. The MCP `snip_restore` round trip over an open session (Python `mcp` client).
# Installs the Python client into .venv-mcp/ when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-300}"
# Every build with the `dist` profile, as scripts/install.sh builds.
cargo build --quiet --locked --profile dist -p snip-cli --bin snip
SNIP="$PWD/target/dist/snip"
builds=("dynamic=$SNIP")
host="$(rustc -vV | sed -n 's/^host: //p')"
case "$host" in
    *-linux-gnu)
        # The flags of scripts/install.sh; an explicit --target keeps them off build
        # scripts and proc-macros.
        RUSTFLAGS="-C target-feature=+crt-static" \
            cargo build --quiet --locked --profile dist -p snip-cli --bin snip --target "$host"
        builds+=("static=$PWD/target/$host/dist/snip")
        RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
            CARGO_TARGET_DIR=target/no-pie \
            cargo build --quiet --locked --profile dist -p snip-cli --bin snip --target "$host"
        builds+=("static-no-pie=$PWD/target/no-pie/$host/dist/snip")
        ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SNIP_STORE_DIR="$work/store"

python3 - "$work/payload.json" <<'PY'
import json, sys
log = open("fixtures/corpus/cargo-test-fail-notty.txt").read()
payload = {"session_id": "bench", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "cargo test"},
           "tool_response": {"stdout": log, "stderr": "", "interrupted": False, "isImage": False}}
open(sys.argv[1], "w").write(json.dumps(payload))
PY
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
cmds = {"cat": ["/bin/cat"]}
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
cat = med["cat"][0]
print(f"spawned in turn on {os.path.getsize(stdin)} bytes, {runs} runs each, medians:")
for k, (wall, cpu, faults) in med.items():
    print(f"  {k:42s} wall {wall:.3f} ms  cpu {cpu:.3f} ms  {faults:4.0f} faults  {wall / cat:.2f}x cat")
PY
}
spawned "$work/payload.json" "snip hook claude-code" "hook claude-code" "${builds[@]}"
cp fixtures/corpus/cargo-test-fail-notty.txt "$work/log.txt"
spawned "$work/log.txt" "snip (filter)" "" "${builds[@]}"

VENV=.venv-mcp
if ! "$VENV/bin/python" -c "import mcp" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "pytest>=8"
fi
id="$(grep -o 'sn_[0-9a-f]*' "$work/reply.json" | head -1)"
"$VENV/bin/python" tests/mcp/bench_restore.py "$SNIP" "$SNIP_STORE_DIR" "$id" 500
