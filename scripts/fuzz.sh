#!/usr/bin/env bash
# Coverage-guided fuzzing of snip's engine and store on the stable toolchain:
# libFuzzer (through libfuzzer-sys) linked into targets built with SanitizerCoverage
# flags (no nightly, no sanitizer runtime). Targets live in fuzz/ (a workspace of its
# own, excluded from the main build):
#
#   compress      the pipeline with a real store: no panic, never larger, accounting
#                 (snip_testkit::check_accounting), deterministic, idempotent, valid JSON
#                 stays valid, protected diffs byte-identical
#   stream        the stream compressor: random chunkings give the whole-push output
#   restore_call  restore-call parsing and answering from a real store
#   restore_json  restore requests as JSON (MCP tool arguments) answered
#   hook          hook payloads (Claude Code PostToolUse/PreToolUse JSON, OpenCode's
#                 saved-output notice) answered by snip-hosts: no panic, a reply that
#                 mirrors the tool's output with accounting, or none (the original)
#   mcp           MCP requests (JSON-RPC lines) answered by the MCP server: no panic,
#                 a serializable reply, restore answers with a known status
#
# Memory: each run has -rss_limit_mb=1024 and -malloc_limit_mb=512 with inputs of at
# most 256 KiB (-max_len), so a target that needs over ~2000 bytes per input byte
# fails as an out-of-memory finding.
#
# Usage: scripts/fuzz.sh [MINUTES] [TARGET...]   MINUTES in all (default 4), split
#                                                 evenly across the targets
#        scripts/fuzz.sh --smoke                  a fixed seed and run count per target
#                                                 (CI: the same inputs every run)
# Findings are written to fuzz/artifacts/TARGET/ and the run fails; the corpus grows
# in fuzz/corpus/TARGET/ (seeded from fuzz/seeds/ and the captures). Both are
# git-ignored. SNIP_FUZZ_SKIP=accounting,idempotence,idempotence-json,json turns a
# check off while its issue is open (compress target; `idempotence` is for inputs that
# are not JSON, `idempotence-json` for JSON inputs); none is off by default.
#
# The smoke builds with the `smoke` profile (fuzz/Cargo.toml: less optimized, no debug
# info; its build is most of its time) and starts each target from a fresh corpus of
# fuzz/seeds/ and the rule fixtures (crates/snip-core/tests/fixtures, a few excerpts
# for each rule, at most 16 KiB of each) only, so a grown fuzz/corpus/ cannot change
# what it runs; the targets' temporary stores go to /dev/shm when it is writable. It
# runs two targets at a time, prints the build's and each target's seconds and the
# seed inputs run before the first mutation, and fails if a target stops on the time
# limit before its run count.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=4
smoke=0
if [ "${1:-}" = "--smoke" ]; then
    smoke=1
    shift
elif [ -n "${1:-}" ] && [ "${1:-}" -eq "${1:-}" ] 2>/dev/null; then
    minutes="$1"
    shift
fi
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    targets=(compress stream restore_call restore_json hook mcp)
fi
if [ "$smoke" = 1 ]; then
    per=300 # a safety net: the smoke ends on its run count (reaching this fails it)
    profile=smoke
else
    per=$((minutes * 60 / ${#targets[@]}))
    profile=release
fi
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps these flags off build scripts and proc macros.
t0=$(now)
cargo build --profile "$profile" --quiet --manifest-path fuzz/Cargo.toml \
    --target "$host" --target-dir fuzz/target
bin=fuzz/target/$host/$profile
printf '==> build (%s profile): %ss\n' "$profile" "$(secs "$t0" "$(now)")"

# Seeds: the checked-in ones, and every capture and fixture (the smoke: the rule
# fixtures) behind a budget byte (compress) or a budget byte and a chunking seed
# (stream).
corpus=fuzz/corpus
seed_dirs=(fixtures crates/snip-core/tests/fixtures)
cap=262144 # bytes of a capture a seed holds (the hook's: 64 KiB)
hook_cap=65536
run_env=()
if [ "$smoke" = 1 ]; then
    # The targets' stores (temporary directories) in memory where there is a tmpfs:
    # each input writes an original and renames it into place, and on a busy disk
    # that wait, not the work, was most of a run (the hook target: 4.7 s for 50 inputs
    # on disk, 1.1 s in /dev/shm).
    tmp=$(mktemp -d)
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        rm -rf "$tmp"
        tmp=$(mktemp -d /dev/shm/snip-fuzz.XXXXXX)
    fi
    trap 'rm -rf "$tmp"' EXIT
    corpus=$tmp/corpus
    run_env=(env TMPDIR="$tmp")
    seed_dirs=(crates/snip-core/tests/fixtures)
    # Over every budget the targets draw for a seed (at most 1.5 KiB), and cheap to run.
    cap=16384
    hook_cap=16384
fi
for t in "${targets[@]}"; do
    mkdir -p "$corpus/$t" "fuzz/artifacts/$t"
    if [ -d "fuzz/seeds/$t" ]; then
        cp -n fuzz/seeds/"$t"/* "$corpus/$t/" 2>/dev/null || true
    fi
done
i=0
while IFS= read -r -d '' f; do
    i=$((i + 1))
    for t in "${targets[@]}"; do
        case "$t" in
        compress) { printf '\x08'; head -c $((cap - 1)) "$f"; } >"$corpus/$t/seed-$i" ;;
        stream) { printf '\x08\x2a'; head -c $((cap - 2)) "$f"; } >"$corpus/$t/seed-$i" ;;
        # A Bash output (selector 0: stdout, no stderr).
        hook) { printf '\x00'; head -c $((hook_cap - 1)) "$f"; } >"$corpus/$t/seed-$i" ;;
        esac
    done
done < <(find "${seed_dirs[@]}" -type f \
    ! -name '*.md' ! -name '*.tsv' ! -name '*.snap' -print0 | sort -z)

# One target's run; what it prints goes to $reports/TARGET (printed in target order
# once all have run) and its exit status says whether it passed.
run_target() {
    local t="$1" extra=() runs="" log t0 done_runs
    if [ "$smoke" = 1 ]; then
        # A fixed seed and a fixed run count: the same inputs on every run, so the
        # smoke never fails by chance (1-30 s a target here: stream's 1,000 runs took
        # 28 s in CI, its 3,000 took 64 s).
        case "$t" in
        compress | hook) runs=500 ;;
        stream) runs=1000 ;;
        *) runs=20000 ;;
        esac
        extra=(-seed=1 -runs="$runs")
    fi
    printf '==> fuzz %s for %ss\n' "$t" "$per"
    log="fuzz/artifacts/$t.log"
    t0=$(now)
    if ${run_env[@]+"${run_env[@]}"} "$bin/$t" "$corpus/$t" -max_total_time="$per" -max_len=262144 \
        -rss_limit_mb=1024 -malloc_limit_mb=512 -timeout=30 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$t/" ${extra[@]+"${extra[@]}"} >"$log" 2>&1; then
        grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov:' "$log" | tail -3
        # Inputs run before the first mutation: the seeds (libFuzzer's INITED line).
        printf 'fuzz %s: %ss, %s seed inputs\n' "$t" "$(secs "$t0" "$(now)")" \
            "$(sed -n 's/^#\([0-9]*\)[[:space:]]*INITED.*/\1/p' "$log" | head -1)"
        done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        if [ "$smoke" = 1 ] && [ "$done_runs" != "$runs" ]; then
            echo "fuzz $t: stopped at the ${per}s limit after $done_runs of $runs runs"
            return 1
        fi
    else
        echo "fuzz $t: FINDING (see $log and fuzz/artifacts/$t/)"
        grep -E 'panicked|ERROR|SUMMARY' "$log" | head -5
        return 1
    fi
}

# The smoke runs two targets at a time (each libFuzzer process uses one core; the
# machines here have two); a timed run gives each target its share of MINUTES in turn.
jobs=1
if [ "$smoke" = 1 ]; then
    jobs=2
fi
reports=$(mktemp -d)
trap 'rm -rf "$reports" ${tmp:+"$tmp"}' EXIT
status=0
running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || status=1
        running=$((running - 1))
    fi
    run_target "$t" >"$reports/$t" 2>&1 &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || status=1
    running=$((running - 1))
done
for t in "${targets[@]}"; do
    cat "$reports/$t"
done
exit "$status"
