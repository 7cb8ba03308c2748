#!/usr/bin/env bash
# Runs inside the clean root (packaging/test_clean_root.sh): install, use, purge, compare.
# shadow's backups (/etc/gshadow- and the like) are not the packages' files.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
fail=0
step() {
  echo "\$ $*"
  "$@" >/tmp/step.out 2>&1
  local rc=$?
  sed 's/^/    /' /tmp/step.out | tail -n "${TAIL:-8}"
  echo "  -> exit $rc"
  ((rc == 0)) || fail=1
  return $rc
}
snapshot() {
  find /usr /etc /opt /srv /var/lib/dpkg/info /var/lib/systemd -xdev 2>/dev/null \
    | grep -v -e '^/etc/ld.so.cache$' -e '^/etc/[a-z]*-$' -e '^/var/lib/systemd/deb-systemd' | sort
  dpkg-query -W -f='pkg ${Package}\n' | sort
}
snapshot >/tmp/before.txt

step apt-get install -y -q --no-install-recommends /tmp/debs/roceconf_*.deb /tmp/debs/roceconf-agent_*.deb || exit 1
mkdir -p /tmp/work && cd /tmp/work || exit 1
TAIL=3 step roceconf run --target reference
step test -s roceconf-report/report.json
ls roceconf-report | sed 's/^/    report file: /'
TAIL=200 step bash -o pipefail -c 'tshark -G plugins | grep -i roceconf'
step /usr/bin/python3 -c 'import roceconf; print(roceconf.__file__)'
TAIL=3 step roceconf-agent --help
TAIL=3 step bash -c 'MANPAGER=cat MANWIDTH=80 man roceconf >/tmp/m && head -n 5 /tmp/m'
TAIL=3 step bash -c 'MANPAGER=cat man 8 roceconf-agent >/tmp/m && head -n 3 /tmp/m'
TAIL=3 step bash -c 'MANPAGER=cat man 5 roceconf-profile >/tmp/m && head -n 3 /tmp/m'
TAIL=3 step bash -c 'MANPAGER=cat man 5 roceconf-case >/tmp/m && head -n 3 /tmp/m'
cd / && rm -rf /tmp/work
step apt-get purge -y -q --autoremove roceconf roceconf-agent
snapshot >/tmp/after.txt
echo "\$ diff <files and packages before install> <after purge>"
if diff /tmp/before.txt /tmp/after.txt >/tmp/left.txt; then
  echo "  -> exit 0 (nothing left behind)"
else
  sed 's/^/    /' /tmp/left.txt | head -n 40
  echo "  -> exit 1 (left behind or removed)"
  fail=1
fi
exit $fail
