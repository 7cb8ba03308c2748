#!/usr/bin/env bash
# Creates (or removes) two network namespaces joined by a veth pair, for raw-socket tests and
# benchmarks that must never touch the host's own interfaces.
#
#   scripts/netns-pair.sh up   [PREFIX] [--mtu N | --jumbo]   # default PREFIX rcnf, MTU 1500
#   scripts/netns-pair.sh down [PREFIX]
#   scripts/netns-pair.sh sweep                                    # labs of dead roceconf runs
#
# up makes PREFIX-a (interface PREFIX-va, 192.0.2.1/24) and PREFIX-b (PREFIX-vb, 192.0.2.2/24),
# TEST-NET-1 addresses only (RFC 5737), and prints one line per side:
#   a netns=rcnf-a if=rcnf-va mac=aa:bb:cc:dd:ee:ff ip=192.0.2.1/24 mtu=1500
# Both commands are idempotent: up on an existing pair re-applies the settings (MTU included),
# down on a missing pair does nothing. sweep deletes the namespaces a crashed run's daemon lab
# left (rcnf<PID>-a/-b, rcnf<PID><letters>-a/-b) when that PID is gone and no process is
# inside, as every new lab does first; it touches no other name. Needs root (CAP_SYS_ADMIN,
# CAP_NET_ADMIN).
set -euo pipefail

usage() {
  echo "usage: $0 up|down [PREFIX] [--mtu N | --jumbo] | $0 sweep" >&2
  exit 2
}

(($# >= 1)) || usage
action=$1
shift
prefix=rcnf
mtu=1500
while (($# > 0)); do
  case $1 in
    --mtu)
      (($# >= 2)) || usage
      mtu=$2
      shift 2
      ;;
    --jumbo)
      mtu=9000
      shift
      ;;
    --mtu=*)
      mtu=${1#--mtu=}
      shift
      ;;
    -*) usage ;;
    *)
      prefix=$1
      shift
      ;;
  esac
done

# Interface names are limited to 15 characters: PREFIX-va must fit.
if [[ ! $prefix =~ ^[A-Za-z0-9_]{1,12}$ ]]; then
  echo "netns-pair: PREFIX must be 1-12 letters, digits or '_' (got '$prefix')" >&2
  exit 2
fi
if [[ ! $mtu =~ ^[0-9]+$ ]]; then
  echo "netns-pair: --mtu needs a number (got '$mtu')" >&2
  exit 2
fi

ns_a=$prefix-a
ns_b=$prefix-b
if_a=$prefix-va
if_b=$prefix-vb

if [[ $(id -u) -ne 0 ]]; then
  echo "netns-pair: needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run with sudo" >&2
  exit 1
fi

ns_exists() { ip netns list | awk '{print $1}' | grep -qx -- "$1"; }
link_exists() { ip -n "$1" link show dev "$2" >/dev/null 2>&1; }

down() {
  # Deleting a namespace destroys the veth end inside it, and with it the peer.
  for ns in "$ns_a" "$ns_b"; do
    if ns_exists "$ns"; then ip netns delete "$ns"; fi
  done
}

side() {  # ns interface address
  local mac cur_mtu
  mac=$(ip -n "$1" -o link show dev "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
  cur_mtu=$(ip -n "$1" -o link show dev "$2" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
  echo "netns=$1 if=$2 mac=$mac ip=$3 mtu=$cur_mtu"
}

up() {
  ns_exists "$ns_a" || ip netns add "$ns_a"
  ns_exists "$ns_b" || ip netns add "$ns_b"
  # A half-built pair (one end missing) cannot be repaired in place: rebuild the link.
  if ! link_exists "$ns_a" "$if_a" || ! link_exists "$ns_b" "$if_b"; then
    ip -n "$ns_a" link delete "$if_a" 2>/dev/null || true
    ip -n "$ns_b" link delete "$if_b" 2>/dev/null || true
    # Created directly inside the namespaces so the names never clash with the host's.
    ip link add "$if_a" netns "$ns_a" type veth peer name "$if_b" netns "$ns_b"
  fi
  local ns ifc addr
  for pair in "$ns_a $if_a 192.0.2.1/24" "$ns_b $if_b 192.0.2.2/24"; do
    read -r ns ifc addr <<<"$pair"
    # Keep the wire quiet: no IPv6 router solicitations or neighbour discovery in captures.
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
    ip -n "$ns" addr flush dev "$ifc"
    ip -n "$ns" addr add "$addr" dev "$ifc"
    ip -n "$ns" link set dev "$ifc" mtu "$mtu"
    ip -n "$ns" link set dev lo up
    ip -n "$ns" link set dev "$ifc" up
  done
  echo "a $(side "$ns_a" "$if_a" 192.0.2.1/24)"
  echo "b $(side "$ns_b" "$if_b" 192.0.2.2/24)"
}

sweep() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}'); do
    [[ $ns =~ ^rcnf([1-9][0-9]{0,8})[a-z]*-[ab]$ ]] || continue
    pid=${BASH_REMATCH[1]}
    if kill -0 "$pid" 2>/dev/null; then continue; fi
    if [[ -n $(ip netns pids "$ns" 2>/dev/null) ]]; then continue; fi
    ip netns delete "$ns" && echo "removed $ns (run $pid is gone)"
  done
}

case $action in
  up) up ;;
  down) down ;;
  sweep) sweep ;;
  *) usage ;;
esac
