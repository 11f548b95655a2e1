#!/usr/bin/env bash
# Lists the functions `snip hook claude-code` runs on the benchmark's payload
# (scripts/bench-hook.sh --payload: a 52,144-byte Bash PostToolUse payload), as
# linker-script input-section patterns for scripts/hook-layout.ld, where they go
# first: the code a hook call runs then lies in a few hundred KB, mapped by a few
# page faults, instead of across the crates' 3 MB.
#
#   scripts/hook-hot-functions.sh [--write]
#
# Prints the patterns, one a line (`*(.text.NAME)`); with --write, puts them between
# the `hot functions` lines of scripts/hook-layout.ld instead. Run it again after the
# hook's code changes much: a stale pattern matches a function that is gone (none)
# or renamed (it then lies with its crate's functions, as before), never wrongly.
#
# How: the portable build that scripts/install.sh makes (valgrind runs no AVX-512
# code) runs the payload under callgrind, which names every function that ran, by
# its mangled symbol. A symbol's build-specific parts become `*`: the hash of a
# `_ZN…17h<16 hex>E` name (so a pattern takes every instantiation of a generic
# function of that name), and the crate disambiguators (`Cs…_`) and back-references
# (`B…_`) of a `_R…` name. glibc's functions are left out: the layout takes
# `libc.a`'s code as a whole. Needs valgrind (Debian package `valgrind`).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind > /dev/null || {
    echo "hook-hot-functions: needs valgrind (apt-get install valgrind)" >&2
    exit 1
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bash scripts/install.sh --portable --root "$work/inst" --bin snip -q >&2
bash scripts/bench-hook.sh --payload "$work/payload.json"
HOME="$work/home" SNIP_STORE_DIR="$work/store" valgrind --tool=callgrind --demangle=no \
    --callgrind-out-file="$work/callgrind.out" "$work/inst/bin/snip" hook claude-code \
    < "$work/payload.json" > /dev/null 2> "$work/valgrind.err" || {
    cat "$work/valgrind.err" >&2
    exit 1
}
python3 - "$work/callgrind.out" "${1:-}" <<'PY'
import re, sys

names = {
    m.group(1)
    for line in open(sys.argv[1], encoding="utf-8", errors="replace")
    if (m := re.match(r"^c?fn=\(\d+\) (\S+)", line))
}
patterns = set()
for name in names:
    if name.startswith("_ZN"):
        pat = re.sub(r"17h[0-9a-f]{16}E$", "17h*", name)
    elif name.startswith("_R"):
        pat = re.sub(r"Cs[0-9A-Za-z]*_", "Cs*_", name)
        pat = re.sub(r"B[0-9A-Za-z]*_", "B*_", pat)
    else:
        continue  # glibc's, and addresses with no symbol
    patterns.add(pat)
lines = [f"    *(.text.{p})\n" for p in sorted(patterns)]
if sys.argv[2] != "--write":
    sys.stdout.write("".join(lines))
    sys.exit(0)
path = "scripts/hook-layout.ld"
text = open(path).read()
begin = "    /* hot functions: begin"
end = "    /* hot functions: end */\n"
head, rest = text.split(begin, 1)
first, rest = rest.split("\n", 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + first + "\n" + "".join(lines) + end + tail)
print(f"hook-hot-functions: {len(lines)} patterns written to {path}", file=sys.stderr)
PY
