#!/usr/bin/env bash
# Installs the Debian packages into a clean Debian 12 root (mmdebstrap, from this host's apt
# mirror, as lab/rxe does), uses them there as a user would, purges them and checks that nothing
# is left behind. Usage: packaging/test_clean_root.sh [DEB_DIR] (default: build scripts/package.sh's).
# Root only (chroot). Prints each command run in the root and its exit status.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "test_clean_root: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap builds the root with chroot): run it as root"
command -v mmdebstrap >/dev/null || die "mmdebstrap missing: apt-get install mmdebstrap (scripts/setup.sh)"

debs=${1:-}
if [[ -z $debs ]]; then
  scripts/package.sh >/dev/null
  debs=${ROCECONF_PACKAGE_BUILD_DIR:-build-pkg}/packages
fi
debs=$(cd "$debs" && pwd)
ls "$debs"/roceconf_*.deb "$debs"/roceconf-agent_*.deb >/dev/null || die "no packages in $debs"

mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n $mirror ]] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[[ -n $mirror ]] || die "no Debian mirror in this host's apt sources: add one to /etc/apt/sources.list"

work=$(mktemp -d /tmp/roceconf-clean-root.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$debs"/roceconf_*.deb "$debs"/roceconf-agent_*.deb "$work"/
cp packaging/clean_root_steps.sh "$work"/steps.sh

# The steps run in a customize hook, where mmdebstrap has /proc, /sys and /dev mounted. tshark
# and man-db are what a lab host has beside roceconf; the debconf answer keeps tshark's question
# from blocking.
t0=$SECONDS
mmdebstrap --quiet --variant=apt --include=tshark,man-db \
  --essential-hook='echo "wireshark-common wireshark-common/install-setuid boolean false" | chroot "$1" debconf-set-selections 2>/dev/null || true' \
  --customize-hook="mkdir -p \"\$1/tmp/debs\" && cp $work/*.deb $work/steps.sh \"\$1/tmp/debs/\"" \
  --customize-hook='chroot "$1" bash /tmp/debs/steps.sh' \
  bookworm "$work/root" "$mirror" || die "the clean-root test failed (transcript above)"
echo "clean-root test passed in $((SECONDS - t0)) s"
