#!/usr/bin/env bash
# Times `roceconf decode --stats` against tshark extracting one RoCE field from the same
# synthetic capture (roceconf-gen), best of --runs each, and fails when roceconf is less than
# --min-ratio times faster. tshark running as root prints a warning on stderr; that is expected.
set -euo pipefail

usage() {
  cat <<EOF
usage: $0 [--build DIR] [--frames N] [--seed S] [--runs N] [--min-ratio R] [--capture FILE]
  --build DIR      build tree holding roceconf and roceconf-gen (default: <repo>/build)
  --frames N       frames in the generated capture (default 1000000)
  --seed S         generator seed (default 1)
  --runs N         runs of each tool; the best time counts (default 2)
  --min-ratio R    required tshark/roceconf time ratio (default 50)
  --capture FILE   keep the capture here and reuse it when it exists (default: a temp file)
EOF
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
frames=1000000
seed=1
runs=2
min_ratio=50
capture=
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --min-ratio) min_ratio=$2; shift 2 ;;
    --capture) capture=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

roceconf=$build/roceconf
gen=$build/roceconf-gen
if [[ ! -x $roceconf ]]; then
  echo "$roceconf is missing: build the roceconf CLI first (cmake --build $build)" >&2
  exit 2
fi
if [[ ! -x $gen ]]; then
  echo "$gen is missing: build it first (cmake --build $build --target roceconf-gen)" >&2
  exit 2
fi
if ! command -v tshark >/dev/null; then
  echo "tshark is not installed" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
capture=${capture:-$tmp/traffic.pcap}
if [[ ! -s $capture ]]; then
  echo "generating $frames frames (seed $seed) into $capture"
  "$gen" --frames "$frames" --seed "$seed" --out "$capture"
fi
echo "capture: $capture ($(du -h "$capture" | cut -f1))"

# Best wall-clock time in seconds of `runs` runs of the command; output is discarded, failures
# abort the script.
best_of() {
  local best='' start end t
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    "$@" >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; echo "failed: $*" >&2; exit 1; }
    end=$(date +%s%N)
    t=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
    if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  echo "$best"
}
t_roceconf=$(best_of "$roceconf" decode --stats "$capture")
echo "roceconf decode --stats:                ${t_roceconf} s"
t_tshark=$(best_of tshark -r "$capture" -T fields -e infiniband.bth.psn)
echo "tshark -T fields -e infiniband.bth.psn: ${t_tshark} s"

ratio=$(awk -v a="$t_tshark" -v b="$t_roceconf" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 1e9) }')
echo "ratio (tshark / roceconf): ${ratio}x (minimum ${min_ratio}x)"
if awk -v r="$ratio" -v m="$min_ratio" 'BEGIN { exit !(r < m) }'; then
  echo "FAIL: roceconf is less than ${min_ratio}x faster than tshark" >&2
  exit 1
fi
echo "PASS"
