#!/usr/bin/env bash
# Configures and builds roceconf into build/ (Release with debug info). Extra arguments go to
# the configure step, e.g. -DROCECONF_BENCH=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@" >/dev/null
cmake --build build
