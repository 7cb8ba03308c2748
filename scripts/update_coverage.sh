#!/bin/sh
# Rewrites the compliance coverage table in cases/COVERAGE.md (between the coverage markers) and
# cases/TRACEABILITY.md from the built catalogue. Usage: scripts/update_coverage.sh [BUILD_DIR]
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
"$build/roceconf" run --list --format md > cases/TRACEABILITY.md
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$build/roceconf" run --list --format coverage > "$table"
/usr/bin/python3 - "$table" <<'PY'
import sys
table = open(sys.argv[1]).read()
readme = open("cases/COVERAGE.md").read()
begin, end = "<!-- coverage:begin -->\n", "<!-- coverage:end -->"
i, j = readme.index(begin) + len(begin), readme.index(end)
open("cases/COVERAGE.md", "w").write(readme[:i] + table + readme[j:])
PY
