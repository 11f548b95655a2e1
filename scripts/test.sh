#!/usr/bin/env bash
# Runs every check and test of the project, as CI does (.ci/run calls this script).
#
#   1. cargo fmt --check, the layout check (scripts/check-layout.sh), cargo clippy (all
#      targets, warnings are errors; this also checks the declared minimum Rust
#      version: clippy's incompatible_msrv lint)
#   2. cargo test for every crate except the Python module (which maturin builds),
#      cargo doc with warnings as errors, and the README's first set-up command
#      (`cargo build -p snip-cli -p snip-bench && snip demo`)
#   3. a fuzz smoke (scripts/fuzz.sh --smoke: a fixed seed and run count per target)
#      and every scripts/test-*.sh: integration tests against the real hosts (Hermes
#      Agent, the Python MCP client, OpenCode), each installing what it needs into a
#      project-local, git-ignored directory that later runs reuse (the npm hosts and
#      Hermes Agent's venv are fetched in the background from the start, beside
#      steps 1-2)
#
# Usage: scripts/test.sh            everything
#        scripts/test.sh --quick    steps 1-2 only
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
passed=0
failed=0
failures=()

run() {
    local name="$1"
    shift
    step "$name"
    local t0=$SECONDS
    if "$@"; then
        passed=$((passed + 1))
        printf '==> %s: ok (%ss)\n' "$name" "$((SECONDS - t0))"
    else
        failed=$((failed + 1))
        failures+=("$name")
        printf '==> %s: FAILED (%ss)\n' "$name" "$((SECONDS - t0))"
    fi
}

# The real hosts (npm packages, Hermes Agent's venv) are fetched while the compile
# steps run: network and disk work, little CPU. Each suite still checks its own
# install and makes it if this did not.
prefetch=""
if [ "${1:-}" != "--quick" ]; then
    prefetch_log="$(mktemp)"
    (
        for host in claude-code opencode codex; do
            bash scripts/install-host.sh "$host" >/dev/null
        done
        bash scripts/test-hermes.sh --install-only
    ) >"$prefetch_log" 2>&1 &
    prefetch=$!
fi

run "cargo fmt --check" cargo fmt --all -- --check
# One restore request and receipt; only the engines and the registry import rules/
# (the self-test proves the check rejects each kind of violation).
run "scripts/check-layout.sh" bash -c 'bash scripts/check-layout.sh && bash scripts/check-layout.sh --self-test'
run "cargo clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
run "cargo test" cargo test --workspace --exclude snip-py --locked
# Broken intra-doc links and malformed docs fail like warnings do elsewhere.
run "cargo doc" env RUSTDOCFLAGS="-D warnings" \
    cargo doc --no-deps --workspace --exclude snip-py --locked --quiet
# The README's first set-up command, as written (debug build: the binary is built
# already; the store is off so the run leaves nothing behind).
run "README: cargo build -p snip-cli -p snip-bench && snip demo" \
    env SNIP_STORE=0 bash -c 'cargo build --quiet --locked -p snip-cli -p snip-bench && target/debug/snip demo --lines 1 && test -x target/debug/snip-bench'

if [ "${1:-}" != "--quick" ]; then
    cargo build --locked -p snip-cli -p snip-bench >/dev/null
    step "hosts fetched beside the compile steps"
    if wait "$prefetch"; then
        cat "$prefetch_log"
    else
        echo "fetching the hosts early failed (each suite installs what it needs again):"
        tail -n 20 "$prefetch_log"
    fi
    rm -f "$prefetch_log"
    run "scripts/fuzz.sh --smoke" bash scripts/fuzz.sh --smoke
    for s in scripts/test-*.sh; do
        run "$s" bash "$s"
    done
fi

echo
if [ "$failed" -gt 0 ]; then
    printf 'failed: %s\n' "${failures[@]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
