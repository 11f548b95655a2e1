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
# are not JSON, `idempotence-json` for JSON inputs).
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
    per=60 # a safety net: the smoke ends on its run count
    # Idempotence of text is open (issue 16 item 12): at budgets below SNIP_MAX_BYTES's
    # minimum, text comes out over the budget, so a second pass elides more. Pinned as
    # an ignored test in crates/snip-testkit/tests/fuzz_found.rs; the smoke checks
    # everything else (JSON idempotence included) until it is fixed. A full run checks
    # it all.
    export SNIP_FUZZ_SKIP="${SNIP_FUZZ_SKIP:-idempotence}"
else
    per=$((minutes * 60 / ${#targets[@]}))
fi

host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps these flags off build scripts and proc macros.
cargo build --release --quiet --manifest-path fuzz/Cargo.toml \
    --target "$host" --target-dir fuzz/target
bin=fuzz/target/$host/release

# Seeds: the checked-in ones, and every capture and fixture behind a budget byte
# (compress) or a budget byte and a chunking seed (stream).
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    if [ -d "fuzz/seeds/$t" ]; then
        cp -n fuzz/seeds/"$t"/* "fuzz/corpus/$t/" 2>/dev/null || true
    fi
done
i=0
while IFS= read -r -d '' f; do
    i=$((i + 1))
    for t in "${targets[@]}"; do
        case "$t" in
        compress) { printf '\x08'; head -c 262143 "$f"; } >"fuzz/corpus/$t/seed-$i" ;;
        stream) { printf '\x08\x2a'; head -c 262142 "$f"; } >"fuzz/corpus/$t/seed-$i" ;;
        # A Bash output (selector 0: stdout, no stderr).
        hook) { printf '\x00'; head -c 65535 "$f"; } >"fuzz/corpus/$t/seed-$i" ;;
        esac
    done
done < <(find fixtures crates/snip-core/tests/fixtures -type f \
    ! -name '*.md' ! -name '*.tsv' ! -name '*.snap' -print0 | sort -z)

status=0
for t in "${targets[@]}"; do
    extra=()
    if [ "$smoke" = 1 ]; then
        # A fixed seed and a fixed run count: the same inputs on every run, so the
        # smoke never fails by chance (about 10-20 s a target here).
        case "$t" in
        compress | hook) runs=500 ;;
        stream) runs=3000 ;;
        *) runs=20000 ;;
        esac
        extra=(-seed=1 -runs="$runs")
    fi
    printf '==> fuzz %s for %ss\n' "$t" "$per"
    log="fuzz/artifacts/$t.log"
    if "$bin/$t" "fuzz/corpus/$t" -max_total_time="$per" -max_len=262144 \
        -rss_limit_mb=1024 -malloc_limit_mb=512 -timeout=30 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$t/" ${extra[@]+"${extra[@]}"} >"$log" 2>&1; then
        grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov:' "$log" | tail -3
    else
        status=1
        echo "fuzz $t: FINDING (see $log and fuzz/artifacts/$t/)"
        grep -E 'panicked|ERROR|SUMMARY' "$log" | head -5
    fi
done
exit "$status"
