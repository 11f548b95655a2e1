#!/usr/bin/env bash
# The shared store of originals (SNIP_STORE_URL) against real Redis servers on
# loopback ports, each in a temporary directory:
#   - a single server: AOF on, 32 MB maxmemory with volatile-lru (eviction pressure)
#   - a server that requires a password
#   - a three-node cluster (no replicas)
#   - a primary watched by one Sentinel (redis-sentinel)
# then runs crates/snip-cli/tests/redis_store.rs with their URLs set.
#
# redis-server comes from the distribution's packages (installed with apt-get when
# missing and this runs as root; otherwise the suite is skipped with a message).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null ||
    ! command -v redis-sentinel >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get install -y redis-server redis-sentinel >/dev/null 2>&1 ||
            { apt-get update >/dev/null && apt-get install -y redis-server redis-sentinel >/dev/null; }
    else
        echo "skipped: redis-server is not installed (apt-get install redis-server)"
        exit 0
    fi
fi

tmp=$(mktemp -d)
cleanup() {
    local pids=()
    for f in "$tmp"/*/pid; do
        [ -f "$f" ] && pids+=("$(cat "$f")")
    done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    # A server saves its data on SIGTERM: wait (up to ~10 s) until every one has
    # exited, so the directory is not written to while it is removed.
    for _ in $(seq 100); do
        local alive=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    rm -rf "$tmp" 2>/dev/null || { sleep 1; rm -rf "$tmp" || true; }
}
trap cleanup EXIT

# A free loopback port below 55535 (a cluster node also listens on port + 10000).
free_port() {
    python3 -c '
import random, socket
while True:
    p = random.randrange(20000, 45000)
    try:
        for q in (p, p + 10000):
            socket.socket().bind(("127.0.0.1", q))
        print(p)
        break
    except OSError:
        pass'
}

# start NAME PORT [redis-server options...]: a daemon in $tmp/NAME, waits until it answers.
start() {
    local name=$1 port=$2
    shift 2
    local d="$tmp/$name"
    mkdir -p "$d"
    # The options, kept so the test can restart the same server on the same data.
    printf '%q ' redis-server --port "$port" --bind 127.0.0.1 --dir "$d" --save '' \
        --daemonize yes --pidfile "$d/pid" --logfile "$d/log" "$@" >"$d/cmd"
    sh -c "$(cat "$d/cmd")"
    for _ in $(seq 100); do
        redis-cli -p "$port" ${REDISCLI_AUTH:+-a "$REDISCLI_AUTH"} ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.05
    done
    echo "redis-server on port $port did not start:"
    cat "$d/log"
    exit 1
}

single=$(free_port)
start single "$single" --appendonly yes --maxmemory 32mb --maxmemory-policy volatile-lru
auth=$(free_port)
REDISCLI_AUTH=right-password start auth "$auth" --requirepass right-password

ports=()
for i in 1 2 3; do
    p=$(free_port)
    ports+=("$p")
    start "node$i" "$p" --cluster-enabled yes --cluster-config-file "$tmp/node$i/nodes.conf" \
        --appendonly yes --cluster-node-timeout 2000
done
redis-cli --cluster create "127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" \
    "127.0.0.1:${ports[2]}" --cluster-replicas 0 --cluster-yes >"$tmp/cluster-create.log" 2>&1 ||
    { cat "$tmp/cluster-create.log"; exit 1; }
for _ in $(seq 100); do
    redis-cli -p "${ports[0]}" cluster info | grep -q 'cluster_state:ok' && break
    sleep 0.1
done

# A primary and one Sentinel watching it (quorum 1) under the service name `snip`.
primary=$(free_port)
start primary "$primary"
sport=$(free_port)
mkdir -p "$tmp/sentinel"
printf '%s\n' "port $sport" "bind 127.0.0.1" "daemonize yes" "pidfile $tmp/sentinel/pid" \
    "logfile $tmp/sentinel/log" "dir $tmp/sentinel" \
    "sentinel monitor snip 127.0.0.1 $primary 1" >"$tmp/sentinel/sentinel.conf"
redis-sentinel "$tmp/sentinel/sentinel.conf"
for _ in $(seq 100); do
    redis-cli -p "$sport" sentinel get-master-addr-by-name snip 2>/dev/null | grep -q "$primary" && break
    sleep 0.05
done

stop="redis-cli -p $single shutdown >/dev/null 2>&1 || true; \
while redis-cli -p $single ping >/dev/null 2>&1; do sleep 0.05; done"
start_again="sh -c \"\$(cat $tmp/single/cmd)\"; \
until redis-cli -p $single ping 2>/dev/null | grep -q PONG; do sleep 0.05; done"
restart="redis-cli -p $single shutdown >/dev/null 2>&1 || true; \
while redis-cli -p $single ping >/dev/null 2>&1; do sleep 0.05; done; \
sh -c \"\$(cat $tmp/single/cmd)\"; \
until redis-cli -p $single ping 2>/dev/null | grep -q PONG; do sleep 0.05; done"
kill_node="redis-cli -p ${ports[2]} shutdown nosave >/dev/null 2>&1 || true"
revive_node="sh -c \"\$(cat $tmp/node3/cmd)\"; \
until redis-cli -p ${ports[0]} cluster info | grep -q cluster_state:ok; do sleep 0.1; done"

export SNIP_TEST_REDIS_URL="redis://127.0.0.1:$single/0"
export SNIP_TEST_REDIS_RESTART="$restart"
export SNIP_TEST_REDIS_STOP="$stop"
export SNIP_TEST_REDIS_START="$start_again"
export SNIP_TEST_REDIS_SENTINEL_URL="redis+sentinel://127.0.0.1:$sport/snip"
export SNIP_TEST_REDIS_SENTINEL_PRIMARY="redis://127.0.0.1:$primary/0"
export SNIP_TEST_REDIS_AUTH_PORT="$auth"
export SNIP_TEST_REDIS_CLUSTER_URL="redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
export SNIP_TEST_REDIS_CLUSTER_KILL="$kill_node"
export SNIP_TEST_REDIS_CLUSTER_REVIVE="$revive_node"
cargo test --locked -p snip-cli --test redis_store -- --test-threads=1 --nocapture
