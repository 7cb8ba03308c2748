#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test (unit, CLI, tshark cross-check, and the
# root-only network-namespace tests when run as root).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
