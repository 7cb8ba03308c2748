#!/usr/bin/env bash
# Builds the roceconf Wireshark plugin if needed and installs it for the current user, in the
# personal plugin folder tshark and Wireshark scan (`tshark -G folders`, "Personal Plugins",
# then epan/). Then checks that tshark lists the protocol and loads it without warnings.
#
#   dissector/wireshark/install.sh                  # build in build/, install for this user
#   dissector/wireshark/install.sh --build-dir DIR  # use (and if needed configure) DIR
#   sudo dissector/wireshark/install.sh --global    # install in the global plugin folder
#
# tshark run as root ignores the personal folder; root needs --global.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir="$root/build"
global=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --global) global=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install.sh: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "install.sh: error: $*" >&2; exit 2; }
command -v tshark >/dev/null || die "tshark not found: apt-get install tshark"
pkg-config --exists wireshark 2>/dev/null \
  || die "wireshark.pc not found: apt-get install libwireshark-dev libglib2.0-dev"

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build_dir" -G Ninja >/dev/null
fi
cmake --build "$build_dir" -j"$(nproc)" --target roceconf_wireshark
abi=$(pkg-config --modversion wireshark | cut -d. -f1,2)
plugin="$build_dir/dissector/wireshark/plugins/$abi/epan/roceconf.so"
[[ -f "$plugin" ]] || die "the build produced no $plugin"

folder_of() { tshark -G folders 2>/dev/null | awk -F'\t' -v k="$1" '$1 ~ k {print $2; exit}'; }
if [[ $global -eq 1 ]]; then
  dest="$(folder_of '^Global Plugins')/epan"
else
  dest="$(folder_of '^Personal Plugins')/epan"
  if [[ $(id -u) -eq 0 ]]; then
    echo "install.sh: note: tshark run as root loads only global plugins; use --global for root" >&2
  fi
fi
[[ "$dest" != "/epan" ]] || die "tshark -G folders names no plugin folder"
mkdir -p "$dest"
install -m 0644 "$plugin" "$dest/roceconf.so"
echo "installed $dest/roceconf.so"

# Check as whoever the plugin is for (root loads only the global folder).
if [[ $global -eq 1 || $(id -u) -ne 0 ]]; then
  out=$(tshark -G plugins 2>&1)
  grep -q 'roceconf.so' <<<"$out" || die "tshark does not list roceconf.so after installation"
  if grep -qi 'warn\|error' <<<"$out"; then die "tshark warned while loading plugins: $out"; fi
  tshark -G protocols 2>/dev/null | grep -q $'\troceconf\troceconf$' \
    || die "tshark -G protocols does not list roceconf"
  echo "tshark lists protocol roceconf"
fi
