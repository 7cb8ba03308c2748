#!/bin/sh
# Renders an HTML report in headless chromium with name resolution disabled, and writes the DOM
# after the page's script ran. Shared by the report tests.
# Usage: render_in_chromium.sh REPORT.html DOM-OUT. Exit 77 without chromium, 1 on failure.
set -u
report=$1
dom=$2
chromium=${CHROMIUM:-}
[ -n "$chromium" ] || chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIP: chromium not installed (apt-get install chromium)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/roceconf-chromium-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Chromium writes into HOME (crash reports, caches): keep it out of the real one.
export HOME="$tmp/home"
mkdir -p "$HOME"
# MAP * ~NOTFOUND: every host name fails to resolve, so the page renders only from the file.
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --no-first-run --disable-extensions --disable-background-networking --disable-sync \
  --user-data-dir="$tmp/profile" --host-resolver-rules="MAP * ~NOTFOUND" \
  --virtual-time-budget=2000 --dump-dom "file://$(realpath "$report")" \
  >"$dom" 2>"$tmp/chromium.log"
status=$?
if [ $status -ne 0 ] || [ ! -s "$dom" ]; then
  echo "FAIL: chromium exited with $status and dumped $(wc -c <"$dom") bytes"
  tail -n 20 "$tmp/chromium.log"
  exit 1
fi
