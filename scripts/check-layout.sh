#!/usr/bin/env bash
# Checks three layout rules of the source tree (docs/architecture.md), run by
# scripts/test.sh:
#
#   1. The restore request (`RestoreRequest`, `RestoreMode`) and the compression
#      receipt (`Receipt`) are defined once, in snip-store: no Rust crate and no module
#      of python/snip defines a type, struct or class of those names (or a
#      `Restore…Args` / `Restore…Params` / `…Receipt` look-alike) anywhere else. The
#      Python type stub of the native module (python/snip/_native.pyi) describes the
#      one definition and is exempt.
#   1b. The escape lexer is defined once, in snip-core/src/escape.rs: no other Rust
#      file defines a function named like one (`strip_escapes`, `strip_ansi`,
#      `escape_len`, `csi_len`, …) or tests for a CSI final byte (`0x40..=0x7e`,
#      `'@'..='~'`). Exempt: snip-core's `text::strip_ansi` (it calls the lexer) and
#      snip-bench's `clue::strip_ansi`, an independent measuring stick by design (its
#      doc says so).
#   2. In snip-core, only the engines (pipeline.rs, sparse.rs, stream.rs) and the
#      registry (rules/mod.rs) import from `rules/`; a rule never names another rule.
#      Comments (doc links) do not count.
#
# Usage: scripts/check-layout.sh [ROOT]     check ROOT (default: the repository)
#        scripts/check-layout.sh --self-test
#                                           copy the sources to a temporary directory,
#                                           add each kind of violation in turn, and
#                                           require this script to reject each one
# Exit status: 0 when the tree keeps every rule, 1 otherwise (each violation printed
# as `path:line: text`).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = "--self-test" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    fresh() {
        rm -rf "$tmp/t"
        mkdir -p "$tmp/t"
        cp -r "$here/crates" "$here/python" "$tmp/t/" 2>/dev/null
        rm -rf "$tmp/t/python/.venv" "$tmp/t/python/.venv-dev"
    }
    expect_fail() {
        if bash "$0" "$tmp/t" >/dev/null 2>&1; then
            echo "self-test: not rejected: $1" >&2
            exit 1
        fi
        echo "self-test: rejected as it should be: $1"
    }
    fresh
    bash "$0" "$tmp/t" >/dev/null || { echo "self-test: the unchanged tree fails" >&2; exit 1; }
    printf '\npub struct RestoreArgs {\n    pub id: String,\n}\n' >>"$tmp/t/crates/snip-hosts/src/engine.rs"
    expect_fail "a second restore request in snip-hosts"
    fresh
    printf '\n#[derive(serde::Serialize)]\nstruct Receipt {\n    bytes_in: u64,\n}\n' >>"$tmp/t/crates/snip-cli/src/main.rs"
    expect_fail "a second receipt in snip-cli"
    fresh
    printf '\n\nclass RestoreRequest:\n    id: str\n' >>"$tmp/t/python/snip/hermes.py"
    expect_fail "a restore request class in python/snip"
    fresh
    printf '\npub fn strip_escapes(s: &str) -> String {\n    s.to_string()\n}\n' >>"$tmp/t/crates/snip-context/src/digest.rs"
    expect_fail "a second escape lexer in snip-context"
    fresh
    printf '\nfn ends(b: u8) -> bool {\n    (0x40..=0x7e).contains(&b)\n}\n' >>"$tmp/t/crates/snip-core/src/rules/terminal_render/term.rs"
    expect_fail "a CSI parser outside the escape lexer"
    fresh
    printf '\n#[allow(unused_imports)]\nuse crate::rules::ansi_strip;\n' >>"$tmp/t/crates/snip-core/src/doc.rs"
    expect_fail "a floor module importing a rule"
    fresh
    printf '\n#[allow(unused_imports)]\nuse super::head_tail_elide;\n' >>"$tmp/t/crates/snip-core/src/rules/repeat_collapse.rs"
    expect_fail "a rule importing another rule"
    echo "self-test: ok"
    exit 0
fi

root="${1:-$here}"
cd "$root"
bad=0
report() {
    echo "check-layout: $1" >&2
    sed 's/^/  /' >&2
    bad=1
}

# Non-comment lines of Rust files, as `path:line: text`.
code_lines() {
    grep -rnH --include='*.rs' -E "$1" "${@:2}" 2>/dev/null |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true
}

# 1. One restore request, one receipt.
names='(Restore[A-Za-z]*(Request|Args|Params)|RestoreMode|[A-Za-z]*Receipt)'
hits=$(code_lines "^[[:space:]]*(pub(\([a-z]+\))?[[:space:]]+)?(struct|enum|type)[[:space:]]+$names\b" crates |
    grep -vE '^crates/snip-store/src/(restore/request\.rs|receipt\.rs):' || true)
[ -z "$hits" ] || report "a second definition of the restore request or the receipt (the one is in snip-store):" <<<"$hits"
if [ -d python/snip ]; then
    hits=$(grep -rn --include='*.py' -E "^[[:space:]]*class[[:space:]]+$names\b" python/snip || true)
    [ -z "$hits" ] || report "a Python definition of the restore request or the receipt (use the native module's):" <<<"$hits"
fi

# 1b. One escape lexer.
hits=$(code_lines "(\bfn[[:space:]]+[a-z_]*(strip_escapes|strip_ansi|escape_len|csi_len|ansi_len)\b|0x40[[:space:]]*\.\.=[[:space:]]*0x7[eE]|'@'[[:space:]]*\.\.=[[:space:]]*b?'~')" crates |
    grep -vE '^crates/snip-core/src/escape\.rs:|^crates/snip-core/src/text\.rs:[0-9]+:pub fn strip_ansi\(|^crates/snip-bench/src/clue\.rs:' || true)
[ -z "$hits" ] || report "a second escape lexer (the one is snip-core/src/escape.rs):" <<<"$hits"

# 2. Who imports from rules/.
core=crates/snip-core/src
hits=$(code_lines '(crate::rules\b|\brules::)' "$core" |
    grep -vE "^$core/(pipeline|sparse|stream)\.rs:|^$core/rules/" |
    grep -vE "^$core/lib\.rs:[0-9]+:[[:space:]]*pub mod rules;" || true)
[ -z "$hits" ] || report "a snip-core module other than the engines and the registry imports from rules/:" <<<"$hits"
rules=$(find "$core/rules" -mindepth 1 -maxdepth 1 \( -name '*.rs' -o -type d \) ! -name mod.rs -exec basename {} .rs \; | sort -u)
for r in $rules; do
    others=$(grep -vx "$r" <<<"$rules" | paste -sd'|')
    files=$(find "$core/rules" -path "$core/rules/$r.rs" -o -path "$core/rules/$r/*" -name '*.rs')
    [ -n "$files" ] || continue
    # shellcheck disable=SC2086
    hits=$(code_lines "(crate::rules::|super::)($others)\b" $files)
    [ -z "$hits" ] || report "rule $r names another rule:" <<<"$hits"
done

exit "$bad"
