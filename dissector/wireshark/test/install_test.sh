#!/usr/bin/env bash
# The documented install command, run for a throw-away user home: afterwards tshark (run as
# that user) lists the plugin and the protocol and prints no warning. Exit 77 (CTest SKIP) when
# tshark or wireshark.pc is missing.
set -euo pipefail
build_dir=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
command -v tshark >/dev/null || { echo "SKIP: tshark not installed"; exit 77; }
pkg-config --exists wireshark || { echo "SKIP: libwireshark-dev not installed"; exit 77; }

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
chmod 755 "$home"
HOME=$home "$root/dissector/wireshark/install.sh" --build-dir "$build_dir"
chmod -R a+rX "$home"

as_user=()
if [[ $(id -u) -eq 0 ]]; then as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
plugins=$("${as_user[@]}" env HOME="$home" tshark -G plugins 2>&1)
grep -q "$home/.local/lib/wireshark/plugins/.*/epan/roceconf.so" <<<"$plugins" \
  || { echo "FAIL: tshark -G plugins does not list the installed roceconf.so: $plugins"; exit 1; }
if grep -qi 'warn\|error' <<<"$plugins"; then echo "FAIL: warnings: $plugins"; exit 1; fi
"${as_user[@]}" env HOME="$home" tshark -G protocols 2>/dev/null | grep -q $'\troceconf\troceconf$' \
  || { echo "FAIL: tshark -G protocols does not list roceconf"; exit 1; }
echo "installed and listed"
