#!/usr/bin/env bash
# Installs `snip` (crates/snip-cli) and `snip-bench` (crates/snip-bench, the program
# `snip bench` runs) from this checkout with `cargo install`, into the same directory.
#
# On Linux with glibc (host triple *-linux-gnu) the binaries are linked statically
# (glibc included) and not position-independent: a hook starts snip once per tool
# call; a static binary skips the dynamic loader (loading libgcc_s and libc, resolving
# symbols), and a non-PIE one has nothing to relocate at start-up (a static-pie one
# writes its ~8,000 relocations into 33 pages of `.data.rel.ro` first). On the 50 KB
# hook payload that took a call from 1.53-1.78x `cat` (static-pie) to 1.11-1.29x
# (docs/benchmark.md, "The hook near `cat`, again"). The cost: the executable's own
# code and data sit at a fixed address (no ASLR for them, as Go builds by default;
# heap, stack and mappings are still randomized); `--pie` builds static-pie instead.
# The figures are in docs/benchmark.md and docs/claude-code.md, "Performance".
# Elsewhere: `cargo install` with the same profile.
#
# The functions of the crates that compress a tool result are placed together, first
# in the code (scripts/hook-layout.ld, a linker script that adds to the default
# layout): a hook call then maps its code in fewer page faults (docs/benchmark.md,
# "Code layout and start-up").
#
# The code is compiled for this machine's CPU (`-C target-cpu=native`): the hook's
# vector code (memchr, the salient-word search, SHA-256) is then chosen at compile time
# instead of by CPUID queries at every start, which trap to the hypervisor in a virtual
# machine (docs/benchmark.md, "The hook near `cat`, again"). The binary
# may then not run on an older CPU: `--portable` builds for the target's baseline.
#
# Usage: scripts/install.sh [--pie | --no-pie | --dynamic] [--portable] [CARGO INSTALL OPTIONS...]
#   --pie       static-pie: the executable is loaded at a random address too (ASLR),
#               at the cost of relocating it at every start (see above)
#   --no-pie    static and not position-independent (the default on *-linux-gnu)
#   --dynamic   `cargo install --locked --profile dist --path crates/snip-cli`, then
#               the same for crates/snip-bench
#   --portable  for any CPU of the target (no `-C target-cpu=native`): a binary to
#               copy to other machines
#   other options go to `cargo install`, e.g. --root DIR, --debug
#   (--debug or --profile replace the default `--profile dist`)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=no-pie
cpu=(-C target-cpu=native)
# The `dist` profile (whole-program LTO, see Cargo.toml) unless the caller picks one.
profile=(--profile dist)
args=()
for a in "$@"; do
    case "$a" in
        --pie) mode=static ;;
        --no-pie) mode=no-pie ;;
        --dynamic) mode=dynamic ;;
        --portable) cpu=() ;;
        --debug | --profile | --profile=*) profile=(); args+=("$a") ;;
        *) args+=("$a") ;;
    esac
done
args=("${profile[@]}" ${args[@]+"${args[@]}"})

host="$(rustc -vV | sed -n 's/^host: //p')"
flags=()
# The code a hook call runs, laid out together (scripts/hook-layout.ld).
layout=(-C "link-arg=-Wl,-T,$PWD/scripts/hook-layout.ld")
case "$host:$mode" in
    *-linux-gnu:static) flags=(-C target-feature=+crt-static "${layout[@]}") ;;
    *-linux-gnu:no-pie) flags=(-C target-feature=+crt-static -C relocation-model=static "${layout[@]}") ;;
    *:dynamic) ;;
    *) echo "snip install: $host has no static glibc build here; installing as cargo does" >&2 ;;
esac
if [ ${#flags[@]} -gt 0 ]; then
    echo "snip install: linking statically for $host (${flags[*]})" >&2
fi
if [ ${#cpu[@]} -gt 0 ]; then
    echo "snip install: compiling for this machine's CPU (${cpu[*]}; --portable: for any)" >&2
    flags+=("${cpu[@]}")
fi

if [ ${#flags[@]} -gt 0 ]; then
    # With an explicit --target, the flags reach only the installed crates, not build
    # scripts and proc-macros (which cannot be linked statically). Passed as
    # CARGO_ENCODED_RUSTFLAGS (fields separated by 0x1f, after the caller's own
    # flags): the layout's path may hold spaces, which RUSTFLAGS would split.
    if [ -n "${CARGO_ENCODED_RUSTFLAGS:-}" ]; then
        prior=("$CARGO_ENCODED_RUSTFLAGS")
    else
        read -r -a prior <<<"${RUSTFLAGS:-}"
    fi
    joined="$(printf '%s\x1f' ${prior[@]+"${prior[@]}"} "${flags[@]}")"
    export CARGO_ENCODED_RUSTFLAGS="${joined%$'\x1f'}"
    unset RUSTFLAGS
    args=(--target "$host" ${args[@]+"${args[@]}"})
fi
# `--bin NAME` installs only the package that has that program (snip-cli: `snip`,
# snip-bench: `snip-bench`); without it, both.
wanted=""
prev=""
for a in ${args[@]+"${args[@]}"}; do
    case "$prev:$a" in
        --bin:*) wanted="$wanted $a" ;;
    esac
    case "$a" in
        --bin=*) wanted="$wanted ${a#--bin=}" ;;
    esac
    prev="$a"
done
for crate in snip-cli snip-bench; do
    if [ -n "$wanted" ]; then
        case "$crate" in
            snip-cli) bin=snip ;;
            snip-bench) bin=snip-bench ;;
        esac
        case " $wanted " in
            *" $bin "*) ;;
            *) continue ;;
        esac
    fi
    cargo install --locked --path "crates/$crate" ${args[@]+"${args[@]}"}
done
