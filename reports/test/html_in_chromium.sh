#!/bin/sh
# Renders the sample HTML report in headless chromium with name resolution disabled and checks
# the DOM after the page's script ran: summary table, the failing case's ladder and field diff.
# Usage: html_in_chromium.sh PATH/TO/reports_sample_html. Exit 77 (CTest: skipped) without
# chromium.
set -u

sample=$1
here=$(dirname "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/roceconf-html-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

"$sample" "$tmp/report.html" || { echo "FAIL: $sample could not write the report"; exit 1; }
sh "$here/render_in_chromium.sh" "$tmp/report.html" "$tmp/dom.html"
status=$?
[ $status -eq 0 ] || exit $status

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

# The four records (packets, control events, counter changes, kernel log lines) on one timeline.
if ! python3 "$here/timeline_kinds.py" "$tmp/dom.html" psn-gap-naks-once; then
  failures=$((failures + 1))
fi

[ $failures -eq 0 ] || exit 1
echo "OK: chromium rendered the report ($(wc -c <"$tmp/dom.html") bytes of DOM)"
