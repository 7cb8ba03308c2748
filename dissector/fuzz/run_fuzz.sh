#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS, starting from a scratch copy of its committed seed
# corpus (corpus/<name>/, regenerated with `roceconf-gen --corpus dissector/fuzz/corpus`) so
# that runs never grow the repository. Exits non-zero when any target crashes, leaks or hangs;
# reproducers and logs are kept under BUILD_DIR/fuzz-artifacts/.
# Usage: run_fuzz.sh BUILD_DIR SECONDS   (BUILD_DIR configured with clang and -DROCECONF_FUZZ=ON)
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for name in decode mad; do
  bin=$build/dissector/fuzz/${name}_fuzzer
  if [[ ! -x $bin ]]; then
    echo "$bin is missing: configure with CC=clang-14 CXX=clang++-14 -DROCECONF_FUZZ=ON" \
      "and build the ${name}_fuzzer target" >&2
    exit 2
  fi
  corpus=$work/$name
  mkdir -p "$corpus"
  cp "$here/corpus/$name/"* "$corpus/"
  artifacts=$build/fuzz-artifacts/$name
  mkdir -p "$artifacts"
  log=$artifacts/fuzz.log
  echo "== ${name}_fuzzer: ${seconds}s from $(ls "$corpus" | wc -l) seeds"
  if "$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$log" || true
    echo "   ok ($(ls "$corpus" | wc -l) inputs in the working corpus)"
  else
    status=1
    echo "   FAILED: see $log" >&2
    grep -E -A30 '^==[0-9]+==ERROR|^SUMMARY|runtime error|_fuzzer: ' "$log" | head -60 >&2 || true
    ls "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* 2>/dev/null >&2 || true
  fi
done
exit $status
