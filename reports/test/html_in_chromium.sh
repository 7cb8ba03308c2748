#!/bin/sh
# Renders the sample HTML report in headless chromium with name resolution disabled and checks
# the DOM after the page's script ran: summary table, the failing case's ladder and field diff.
# Usage: html_in_chromium.sh PATH/TO/reports_sample_html. Exit 77 (CTest: skipped) without
# chromium.
set -u

sample=$1
chromium=${CHROMIUM:-}
[ -n "$chromium" ] || chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIP: chromium not installed (apt-get install chromium)"
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/roceconf-html-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Chromium writes into HOME (crash reports, caches): keep it out of the real one.
export HOME="$tmp/home"
mkdir -p "$HOME"

"$sample" "$tmp/report.html" || { echo "FAIL: $sample could not write the report"; exit 1; }

# MAP * ~NOTFOUND: every host name fails to resolve, so the page renders only from the file.
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --no-first-run --disable-extensions --disable-background-networking --disable-sync \
  --user-data-dir="$tmp/profile" --host-resolver-rules="MAP * ~NOTFOUND" \
  --virtual-time-budget=2000 --dump-dom "file://$tmp/report.html" \
  >"$tmp/dom.html" 2>"$tmp/chromium.log"
status=$?
if [ $status -ne 0 ] || [ ! -s "$tmp/dom.html" ]; then
  echo "FAIL: chromium exited with $status and dumped $(wc -c <"$tmp/dom.html") bytes"
  tail -n 20 "$tmp/chromium.log"
  exit 1
fi

failures=0
expect() {  # expect DESCRIPTION FIXED-STRING [FILE]
  if ! grep -qF -- "$2" "${3:-$tmp/dom.html}"; then
    echo "FAIL: $1: no '$2' in the rendered DOM"
    failures=$((failures + 1))
  fi
}

expect "the page script ran" 'data-js="ready"'
expect "the script built the toolbar" '>Expand all</button>'
expect "summary table" '<table class="summary" id="summary">'
expect "summary row for psn" '>psn</a></td><td class="n">1</td><td class="n">1</td>'
expect "overall verdict" 'NOT CONFORMANT'

# The failing case's section, on its own.
sed -n '/<section class="case c-fail" id="case-psn-gap-naks-once">/,/<\/section>/p' \
  "$tmp/dom.html" >"$tmp/case.html"
expect "failing case section" 'id="case-psn-gap-naks-once"' "$tmp/case.html"
expect "failing case open" '<details open' "$tmp/case.html"
expect "ladder" '<div class="ladder">' "$tmp/case.html"
expect "sent arrow" '<li class="ev sent" data-kind="sent">' "$tmp/case.html"
expect "received arrow" '<li class="ev recv" data-kind="received">' "$tmp/case.html"
expect "control event" 'poll_cq: SUCCESS RECV 64 B' "$tmp/case.html"
expect "diff table" '<table class="diff">' "$tmp/case.html"
expect "field diff text" 'bth.psn expected 0x000010 vs actual 0x000011' "$tmp/case.html"

if [ $failures -ne 0 ]; then
  echo "chromium log:"
  tail -n 20 "$tmp/chromium.log"
  exit 1
fi
echo "OK: chromium rendered the report ($(wc -c <"$tmp/dom.html") bytes of DOM)"
