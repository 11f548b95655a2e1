#!/usr/bin/env bash
# The cost of the shared store (SNIP_STORE_URL) in a hook call, and of `snip` start-up:
#
#  1. `snip hook claude-code` as a whole process on a ~50 KB Bash PostToolUse payload,
#     with the directory store and with Redis on 127.0.0.1 (a fresh redis-server in a
#     temporary directory), against `cat` on the same payload.
#  2. The same hook on a small payload (start-up: nothing to shorten, no store write).
#  3. An 8 KiB restore page from a 32 MiB original as a long-lived process serves it
#     (store opened once, original kept once, pages at varied offsets): `bytes` and
#     `lines` pages from the directory store and from Redis, interleaved, in one
#     process (crates/snip-store/examples/page_latency.rs); medians, p99, maximum.
#  4. For context, the same `bytes` page as a whole `snip restore` process, against
#     `cat` of an 8 KiB file.
#
# Every command is spawned directly (posix_spawn, stdin from the payload file), all of
# them in turn (interleaved, so a machine getting slower or faster shows in all of
# them), RUNS times after 20 warm-up rounds; medians and p99 of wall time.
#
# Usage: scripts/bench-redis.sh [NAME=PATH ...]   (default: target/release/snip)
# Env: RUNS (default 200); PAGE_ROUNDS (default 300 pages of each kind per run);
# PAGE_BUILDS: NAME=PATH of page_latency builds (default release=the one in
# target/release/examples, built here), run in turn PAGE_REPEATS times (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-200}
PAGE_ROUNDS=${PAGE_ROUNDS:-300}
PAGE_REPEATS=${PAGE_REPEATS:-1}
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("release=$PWD/target/release/snip")
command -v redis-server >/dev/null || { echo "redis-server is not installed"; exit 1; }

work=$(mktemp -d)
cleanup() {
    if [ -f "$work/redis.pid" ]; then
        pid=$(cat "$work/redis.pid")
        kill "$pid" 2>/dev/null || true
        # Wait for it to exit, so that nothing it writes is left behind.
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    fi
    rm -rf "$work"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save '' --daemonize yes \
    --pidfile "$work/redis.pid" --logfile "$work/redis.log" --maxmemory 256mb \
    --maxmemory-policy volatile-lru
until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do sleep 0.05; done

python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
log = open("fixtures/corpus/cargo-test-fail-notty.txt").read()
def payload(out):
    return json.dumps({"session_id": "bench", "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                       "tool_response": {"stdout": out, "stderr": "", "interrupted": False,
                                         "isImage": False}})
open(f"{w}/big.json", "w").write(payload(log))
open(f"{w}/small.json", "w").write(payload("ok\n" * 20))
PY

python3 - "$RUNS" "$work" "$port" "${builds[@]}" <<'PY'
import os, statistics, sys, time
runs, work, port = int(sys.argv[1]), sys.argv[2], sys.argv[3]
builds = [b.split("=", 1) for b in sys.argv[4:]]
base = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
def env(**kw):
    e = dict(base)
    e.update(kw)
    return e
for label, payload, stores in [
    ("hook on 50 KB", f"{work}/big.json", True),
    ("hook on a small payload (start-up)", f"{work}/small.json", True),
]:
    cmds = {"cat": (["/bin/cat"], env())}
    for name, path in builds:
        argv = [path, "hook", "claude-code"]
        os.makedirs(f"{work}/home-{name}", exist_ok=True)
        cmds[f"{name} file store"] = (argv, env(HOME=f"{work}/home-{name}"))
        if stores:
            cmds[f"{name} redis"] = (argv, env(HOME=f"{work}/home-{name}",
                                             SNIP_STORE_URL=f"redis://127.0.0.1:{port}/0",
                                             SNIP_STORE_CONNECT_TIMEOUT_MS="1000",
                                             SNIP_STORE_TIMEOUT_MS="1000"))
    res = {k: [] for k in cmds}
    null = os.open(os.devnull, os.O_WRONLY)
    for r in range(runs + 20):
        for name, (argv, e) in cmds.items():
            fd = os.open(payload, os.O_RDONLY)
            t0 = time.perf_counter_ns()
            pid = os.posix_spawn(argv[0], argv, e,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0),
                                               (os.POSIX_SPAWN_DUP2, null, 1)])
            _, status, _ = os.wait4(pid, 0)
            wall = (time.perf_counter_ns() - t0) / 1e6
            os.close(fd)
            if status != 0:
                sys.exit(f"{name} exited with {status}")
            if r >= 20:
                res[name].append(wall)
    cat = statistics.median(res["cat"])
    print(f"{label} ({os.path.getsize(payload)} bytes), {runs} interleaved runs each:")
    for k, v in res.items():
        v.sort()
        med, p99 = statistics.median(v), v[int(len(v) * 0.99) - 1]
        print(f"  {k:28s} median {med:.3f} ms  p99 {p99:.3f} ms  {med / cat:.2f}x cat")
PY

# 3. Pages, in-process.
if [ -z "${PAGE_BUILDS:-}" ]; then
    cargo build --quiet --release -p snip-store --example page_latency
    PAGE_BUILDS="release=$PWD/target/release/examples/page_latency"
fi
echo "uptime: $(uptime)"
for rep in $(seq "$PAGE_REPEATS"); do
    for b in $PAGE_BUILDS; do
        keep=()
        [ -d "$work/pages" ] || keep=(--keep "$work/pages")
        echo "[${b%%=*}, run $rep]"
        "${b#*=}" "redis://127.0.0.1:$port/0" "$PAGE_ROUNDS" "${keep[@]}" | tee "$work/pages-$rep-${b%%=*}.out"
    done
done

# 4. The same page as a whole process, against cat.
python3 - "$RUNS" "$work" "$port" "${builds[@]}" <<'PY'
import glob, os, statistics, sys, time
runs, work, port = int(sys.argv[1]), sys.argv[2], sys.argv[3]
builds = [b.split("=", 1) for b in sys.argv[4:]]
ids = dict(l.split()[1:3] for f in glob.glob(f"{work}/pages-*.out") for l in open(f)
           if l.startswith("id "))
base = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
page = f"{work}/page.bin"
with open(page, "wb") as f:
    f.write(b"x" * 8191 + b"\n")
cmds = {"cat": (lambda at: ["/bin/cat", page], dict(base))}
for name, path in builds:
    cmds[f"{name} file store"] = (
        lambda at, p=path: [p, "restore", ids["directory"], "--bytes", f"{at}:", "--raw"],
        dict(base, SNIP_STORE_DIR=f"{work}/pages"))
    if "redis" in ids:
        cmds[f"{name} redis"] = (
            lambda at, p=path: [p, "restore", ids["redis"], "--bytes", f"{at}:", "--raw"],
            dict(base, SNIP_STORE_URL=f"redis://127.0.0.1:{port}/0",
                 SNIP_STORE_CONNECT_TIMEOUT_MS="1000", SNIP_STORE_TIMEOUT_MS="1000"))
res = {k: [] for k in cmds}
out = os.open(f"{work}/restore.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
null = os.open(os.devnull, os.O_WRONLY)  # "more follows" notes
n = 1
for r in range(runs + 20):
    n = (n * 6364136223846793005 + 1442695040888963407) % 2**64
    at = (n >> 11) % (32 * 1024 * 1024 - 8192)
    for name, (argv, e) in cmds.items():
        argv = argv(at)
        os.ftruncate(out, 0)
        os.lseek(out, 0, 0)
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, e, file_actions=[(os.POSIX_SPAWN_DUP2, out, 1),
                                                              (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status, _ = os.wait4(pid, 0)
        wall = (time.perf_counter_ns() - t0) / 1e6
        if status != 0 or os.fstat(out).st_size < 8000:
            sys.exit(f"{name} exited with {status}, {os.fstat(out).st_size} bytes")
        if r >= 20:
            res[name].append(wall)
cat = statistics.median(res["cat"])
print(f"an 8 KiB bytes page of the 32 MiB original as a whole process, {runs} interleaved runs each:")
for k, v in res.items():
    v.sort()
    med, p99 = statistics.median(v), v[int(len(v) * 0.99) - 1]
    print(f"  {k:28s} median {med:.3f} ms  p99 {p99:.3f} ms  {med / cat:.2f}x cat")
PY
