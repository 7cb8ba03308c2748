#!/usr/bin/env bash
# The main job for a new user: install what is needed, build, and run the conformance catalogue
# against the built-in reference target. Reports go to roceconf-report/ (HTML, JSON, JUnit XML,
# pcapng evidence); extra arguments go to `roceconf run` (e.g. --quirk psn-gap-ack).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/roceconf run "$@"
