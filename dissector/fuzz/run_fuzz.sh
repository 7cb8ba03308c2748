#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS, starting from a scratch copy of its seeds so that runs
# never grow the repository: the codec's committed corpora (dissector/fuzz/corpus/<name>/,
# regenerated with `roceconf-gen --corpus dissector/fuzz/corpus`), the catalogue's own case
# scripts for the case-language parser, and suite/engine/fuzz/corpus/profile/ for the profile
# parser. Two targets run at a time (one per core of a CI machine). Exits non-zero when any
# target crashes, leaks or hangs; reproducers and logs are kept under BUILD_DIR/fuzz-artifacts/.
# Usage: run_fuzz.sh BUILD_DIR SECONDS   (BUILD_DIR configured with clang 16 and -DROCECONF_FUZZ=ON)
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name, binary (under BUILD_DIR), seed files
declare -A binary=(
  [decode]=dissector/fuzz/decode_fuzzer [mad]=dissector/fuzz/mad_fuzzer
  [script]=suite/engine/fuzz/script_fuzzer [profile]=suite/engine/fuzz/profile_fuzzer)
seeds() {
  case $1 in
    decode | mad) find "$here/corpus/$1" -type f ;;
    script) find "$root/cases" -name '*.rcase' ;;
    profile) find "$root/suite/engine/fuzz/corpus/profile" -type f ;;
  esac
}
names=(decode mad script profile)

for name in "${names[@]}"; do
  if [[ ! -x $build/${binary[$name]} ]]; then
    echo "$build/${binary[$name]} is missing: configure with CC=clang-16 CXX=clang++-16" \
      "-DROCECONF_FUZZ=ON and build it" >&2
    exit 2
  fi
done

run_one() {
  local name=$1 bin=$build/${binary[$1]} corpus=$work/$1 artifacts=$build/fuzz-artifacts/$1
  mkdir -p "$corpus" "$artifacts"
  # Seeds are copied under their content's hash: two cases with one file name cannot collide.
  seeds "$name" | while read -r f; do cp "$f" "$corpus/$(sha1sum "$f" | cut -c1-16)"; done
  local log=$artifacts/fuzz.log
  local out="== ${name}_fuzzer: ${seconds}s from $(ls "$corpus" | wc -l) seeds"$'\n'
  if "$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
    out+=$(grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$log" || true)
    out+=$'\n'"   ok ($(ls "$corpus" | wc -l) inputs in the working corpus)"
    echo "$out"
    return 0
  fi
  out+="   FAILED: see $log"$'\n'
  out+=$(grep -E -A30 '^==[0-9]+==ERROR|^SUMMARY|runtime error|_fuzzer: ' "$log" | head -60 || true)
  out+=$'\n'$(ls "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* 2>/dev/null || true)
  echo "$out" >&2
  return 1
}

status=0
for ((i = 0; i < ${#names[@]}; i += 2)); do
  pids=()
  for name in "${names[@]:i:2}"; do
    run_one "$name" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
done
exit $status
