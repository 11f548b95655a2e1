#!/usr/bin/env bash
# Peak resident memory of the streaming filter: `snip` reading a 2 GiB pipe of mixed
# log (the text captures of fixtures/corpus/, repeated) and writing to /dev/null,
# measured with GNU time. `cat` on the same pipe is timed as a baseline.
#
# Not part of CI (it pushes 2 GiB through a pipe; about a minute on 2 cores).
#
#   scripts/bench-rss.sh [BYTES]     # default 2147483648 (2 GiB)
#
# Prints: bytes, wall seconds, MB/s (10^6 bytes/s) and peak RSS (KiB, MiB) for snip,
# and the wall seconds of cat.
set -euo pipefail
cd "$(dirname "$0")/.."

bytes=${1:-2147483648}
[[ -x /usr/bin/time ]] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }

cargo build --release -q -p snip-cli
snip="${CARGO_TARGET_DIR:-target}/release/snip"

# The same inputs as snip_bench::workloads::mixed_log: captures that are neither JSON
# nor a diff, in manifest order.
mapfile -t files < <(tail -n +2 fixtures/corpus/MANIFEST.tsv | cut -f1 \
  | grep -v -e 'json' -e 'git-diff' | sed 's|^|fixtures/corpus/|')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SNIP_STORE_DIR="$work/store"   # never touch the user's store or ledger

# One block of about 64 MB (the captures repeated), so the feeder is not the bottleneck.
block="$work/block"
while [[ ! -s "$block" || $(stat -c %s "$block") -lt 64000000 ]]; do cat "${files[@]}" >>"$block"; done

feed() {
  # `head` closes the pipe once it has BYTES; cat then fails (SIGPIPE) and the loop ends.
  (while cat "$block"; do :; done) 2>/dev/null | head -c "$bytes" || true
}

set +o pipefail
feed | /usr/bin/time -v -o "$work/snip.time" "$snip" >/dev/null
feed | /usr/bin/time -v -o "$work/cat.time" cat >/dev/null
set -o pipefail

wall() { # GNU time prints h:mm:ss or m:ss.ss
  awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$1" \
    | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'
}
rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/snip.time")
snip_s=$(wall "$work/snip.time")
cat_s=$(wall "$work/cat.time")

echo "input:      $bytes bytes of mixed log (${#files[@]} text captures, repeated)"
echo "snip:       ${snip_s} s wall, $(awk -v b="$bytes" -v s="$snip_s" 'BEGIN { printf "%.0f", b / s / 1e6 }') MB/s"
echo "peak RSS:   ${rss_kib} KiB ($(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB)"
echo "cat:        ${cat_s} s wall (baseline, same pipe)"
