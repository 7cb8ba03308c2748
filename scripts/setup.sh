#!/usr/bin/env bash
# Installs every Debian package roceconf needs to build, test, fuzz and benchmark.
#   scripts/setup.sh         the tester host: everything
#   scripts/setup.sh --dut   the DUT host: only what roceconf-agent needs to build and run
#                            (cmake -DROCECONF_AGENT_ONLY=ON; README.md, "Running against a real
#                            device")
set -euo pipefail

mode=full
case "${1:-}" in
  "") ;;
  --dut) mode=dut ;;
  *) echo "setup: error: unknown option '$1' (use --dut for the DUT host, or nothing)" >&2; exit 2 ;;
esac

# roceconf-agent's build: the compiler and CMake, its libraries (CLI11, fmt, nlohmann-json,
# OpenSSL libcrypto for the control API's HMAC) and rdma-core's. Nothing of the dissector,
# captures, reports, Wireshark, Python or browsers.
dut_packages=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libssl-dev
  libibverbs-dev librdmacm-dev
)

packages=(
  build-essential cmake ninja-build pkg-config git
  clang-16 clang-format libclang-rt-16-dev
  libpcap-dev libisal-dev libssl-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  tshark libwireshark-dev libglib2.0-dev
  python3 python3-dev python3-pytest python3-pytest-xdist python3-scapy python3-pybind11 pybind11-dev
  iproute2 ethtool
  libibverbs-dev librdmacm-dev
  chromium libxml2-utils
  dpkg-dev mmdebstrap man-db
)
[[ $mode == dut ]] && packages=("${dut_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present$([[ $mode == dut ]] && echo ' (DUT host)')"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
if [[ $mode == full ]]; then
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
