#!/bin/sh
# Resident set and speed of `roceconf decode` (--stats, --connections, --json, text) over
# generated captures of growing size: the reader maps only a window of the file and the stream analysis keeps
# bounded state, so the peak resident set should stay flat from the smallest to the largest.
#
#   capture/bench/memory_benchmark.sh [--build-dir DIR] [--keep] [SIZE_MB ...]
#
# Sizes default to 100 and 1000 MB (add 10000 for 10 GB where the disk allows; the capture is
# written to $TMPDIR). A measurement, not a test: nothing here fails on a number.
set -eu

build=build
keep=0
sizes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) sizes="$sizes $1"; shift ;;
  esac
done
[ -n "$sizes" ] || sizes="100 1000"

roceconf="$build/roceconf"
gen="$build/roceconf-gen"
for tool in "$roceconf" "$gen"; do
  [ -x "$tool" ] || { echo "memory_benchmark: $tool not built (cmake --build $build)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "memory_benchmark: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/roceconf-mem-XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$dir"' EXIT

# The generator's frames average about 908 bytes (plus a 16-byte record header).
printf '%-10s %-13s %12s %12s %14s\n' "capture" "mode" "wall (s)" "max RSS (MB)" "frames/s"
for mb in $sizes; do
  frames=$((mb * 1000000 / 924))
  pcap="$dir/gen-${mb}MB.pcap"
  "$gen" --frames "$frames" --seed 1 --out "$pcap" >/dev/null
  actual=$(($(stat -c %s "$pcap") / 1000000))
  for mode in --stats --connections --json text; do
    if [ "$mode" = text ]; then args=""; else args="$mode"; fi
    /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$roceconf" decode $args "$pcap" >/dev/null
    read -r wall rss_kb <"$dir/time.txt"
    rate=$(awk -v f="$frames" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0 ? f / w : 0) }')
    printf '%-10s %-13s %12s %12s %14s\n' "${actual}MB" "$mode" "$wall" "$((rss_kb / 1024))" "$rate"
  done
  rm -f "$pcap"
done
