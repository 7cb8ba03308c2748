#!/bin/sh
# A report from a real quirk run, rendered by headless chromium with the network refused: the
# summary, and the failing case's ladder and field diff, must be on the page.
# Usage: quirk_report_in_chromium.sh PATH/TO/roceconf PATH/TO/render_in_chromium.sh. Exit 77
# (skipped) without chromium.
set -u

roceconf=$1
render=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/roceconf-quirk-html-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

"$roceconf" run --quirk psn-gap-ack --filter 'psn/*' --quiet --html "$tmp/report.html"
status=$?
if [ $status -ne 1 ]; then
  echo "FAIL: a run with psn-gap-ack exited $status, not 1"
  exit 1
fi
sh "$render" "$tmp/report.html" "$tmp/dom.html"
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
expect "summary table" '<table class="summary" id="summary">'
expect "overall verdict" 'NOT CONFORMANT'
sed -n '/<section class="case c-fail" id="case-psn-gap-naks-once">/,/<\/section>/p' \
  "$tmp/dom.html" >"$tmp/case.html"
expect "failing case section" 'id="case-psn-gap-naks-once"' "$tmp/case.html"
expect "ladder" '<div class="ladder">' "$tmp/case.html"
expect "sent arrow" 'data-kind="sent"' "$tmp/case.html"
expect "received arrow" 'data-kind="received"' "$tmp/case.html"
# Counter changes read from the target around the case, on the same timeline, under the legend
# of the four records (the reference NIC keeps no kernel log: no kernel line).
expect "counter change" '<li class="ev ctr" data-kind="counter">' "$tmp/case.html"
expect "counter text" 'rx_packets +' "$tmp/case.html"
expect "legend" '<span class="lg-klog">device kernel log</span>' "$tmp/case.html"
expect "diff table" '<table class="diff">' "$tmp/case.html"
expect "field diff" 'aeth.syndrome expected NAK vs actual 0x1f (ACK)' "$tmp/case.html"
expect "failing step" 'gap-naks-once.rcase:' "$tmp/case.html"
[ $failures -eq 0 ] || exit 1
echo "OK: chromium rendered the psn-gap-ack report"
