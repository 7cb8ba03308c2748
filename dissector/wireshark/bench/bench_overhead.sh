#!/usr/bin/env bash
# Overhead of the roceconf plugin in tshark: the same `tshark -T fields -e infiniband.bth.psn`
# over a synthetic capture (roceconf-gen: concurrent RC/UC/UD connections with CM, ACKs, READs,
# NAKs and retransmissions) with and without the plugin, side by side, best of N runs each.
#
#   dissector/wireshark/bench/bench_overhead.sh [--build-dir build] [--frames 1000000] [--runs 3]
#       [--plugin-args "-o roceconf.codec_fields:FALSE"]
#
# --plugin-args: extra tshark arguments for the runs with the plugin. By default the plugin adds
# every codec header field to the tree -T fields builds (so -e finds them); the goal of a ratio
# of at most 1.3 is for a pass that needs none of them (codec_fields off). Runs tshark unprivileged (root ignores plugin folders).
# Prints wall and CPU (user + sys) times; on a busy machine the CPU ratio is the steadier one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build_dir="$root/build"
frames=1000000
runs=3
plugin_args=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --plugin-args) plugin_args=$2; shift 2 ;;
    *) echo "bench_overhead.sh: error: unknown option '$1'" >&2; exit 2 ;;
  esac
done

gen="$build_dir/roceconf-gen"
plugins="$build_dir/dissector/wireshark/plugins"
[[ -x "$gen" && -d "$plugins" ]] || {
  echo "bench_overhead.sh: error: build roceconf-gen and roceconf_wireshark in $build_dir first" \
       "(cmake --build $build_dir --target roceconf-gen roceconf_wireshark)" >&2
  exit 2
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/home" "$work/empty" "$work/out"
chmod 777 "$work/out"  # /usr/bin/time writes there as the unprivileged user
"$gen" --frames "$frames" --out "$work/capture.pcap" >/dev/null
chmod 644 "$work/capture.pcap"

as_user=()
if [[ $(id -u) -eq 0 ]]; then as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi

# One run: "wall cpu" seconds (cpu = user + sys), tshark output discarded; $2: extra arguments.
run_once() {
  local t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086  # the extra arguments split on spaces
  "${as_user[@]}" env HOME="$work/home" WIRESHARK_PLUGIN_DIR="$1" \
    /usr/bin/time -f '%U %S' -o "$work/out/cpu" \
    tshark -r "$work/capture.pcap" $2 -T fields -e infiniband.bth.psn >/dev/null 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" '{printf "%.3f %.3f\n", b - a, $1 + $2}' "$work/out/cpu"
}

# Interleaved, so that load from elsewhere hits both alike; best of $runs each.
best_without_wall=1e9 best_without_cpu=1e9 best_with_wall=1e9 best_with_cpu=1e9
for _ in $(seq "$runs"); do
  read -r w c < <(run_once "$work/empty" "")
  best_without_wall=$(awk -v a="$best_without_wall" -v b="$w" 'BEGIN{print (b<a)?b:a}')
  best_without_cpu=$(awk -v a="$best_without_cpu" -v b="$c" 'BEGIN{print (b<a)?b:a}')
  read -r w c < <(run_once "$plugins" "$plugin_args")
  best_with_wall=$(awk -v a="$best_with_wall" -v b="$w" 'BEGIN{print (b<a)?b:a}')
  best_with_cpu=$(awk -v a="$best_with_cpu" -v b="$c" 'BEGIN{print (b<a)?b:a}')
done

size=$(du -m "$work/capture.pcap" | cut -f1)
printf 'capture: %d frames, %d MB (roceconf-gen)\n' "$frames" "$size"
awk -v w0="$best_without_wall" -v c0="$best_without_cpu" -v w1="$best_with_wall" \
    -v c1="$best_with_cpu" 'BEGIN {
  printf "tshark without plugin: %.2f s wall, %.2f s cpu\n", w0, c0
  printf "tshark with plugin:    %.2f s wall, %.2f s cpu\n", w1, c1
  printf "ratio: %.3f wall, %.3f cpu (goal <= 1.3)\n", w1 / w0, c1 / c0
}'
