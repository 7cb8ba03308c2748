#!/usr/bin/env bash
# The main job for a new user: install what is needed, build, and run roceconf.
# Until the conformance suite lands, that is decoding the bundled sample capture.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/roceconf decode samples/rc-session.pcapng
build/roceconf decode --stats samples/rc-session.pcapng
