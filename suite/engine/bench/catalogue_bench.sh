#!/usr/bin/env bash
# Benchmark: the whole catalogue against the in-process reference target (goal < 10 s) and, as
# root, against the reference daemon over a veth pair the run creates (goal < 60 s). Prints the
# wall time of each run and the best of N.
#   suite/engine/bench/catalogue_bench.sh [--runs N] [--binary build/roceconf]
set -euo pipefail
runs=3
binary=build/roceconf
while (($# > 0)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--binary PATH]" >&2; exit 2 ;;
  esac
done
[[ -x $binary ]] || { echo "no $binary: build first (scripts/build.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=$("$binary" run --list | tail -n 1)

bench() {  # bench LABEL ARGS...
  local label=$1 best=-1 ms
  shift
  for ((i = 1; i <= runs; i++)); do
    local start end status=0
    start=$(date +%s%N)
    "$binary" run --quiet --out "$tmp/out" "$@" || status=$?
    end=$(date +%s%N)
    ms=$(((end - start) / 1000000))
    printf '%-28s run %d: %d.%03d s (exit %d)\n' "$label" "$i" $((ms / 1000)) $((ms % 1000)) "$status"
    if ((best < 0 || ms < best)); then best=$ms; fi
  done
  printf '%-28s best of %d: %d.%03d s for %s\n' "$label" "$runs" $((best / 1000)) $((best % 1000)) "$cases"
}

bench "reference (in process)" --target reference
if [[ $(id -u) -eq 0 ]]; then
  bench "daemon (veth, real time)" --target daemon
else
  echo "daemon (veth): skipped, needs root"
fi
