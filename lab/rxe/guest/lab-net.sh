#!/bin/sh
# Guest boot step (lab-net.service): configure the guest from the kernel command line that
# lab.sh passes (lab.name=, lab.ip=ADDR/LEN, lab.ip6=ADDR/LEN, lab.mtu=, lab.rxe=0|1).
# Data NIC (the lab bridge, RoCE traffic): MAC 52:54:00:77:..  -> eth0
# Control NIC (qemu user networking: ssh, agent control port): MAC 52:54:00:ee:.. -> eth1
set -u
NAME=rxe-dut; IP=; IP6=; MTU=1500; RXE=1
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    lab.name=*) NAME=${arg#lab.name=} ;;
    lab.ip=*) IP=${arg#lab.ip=} ;;
    lab.ip6=*) IP6=${arg#lab.ip6=} ;;
    lab.mtu=*) MTU=${arg#lab.mtu=} ;;
    lab.rxe=*) RXE=${arg#lab.rxe=} ;;
  esac
done
hostname "$NAME"
ip link set lo up
# Both virtio NICs must be probed before they can be told apart (at most 10 s).
i=0
while [ $i -lt 100 ]; do
  [ "$(cat /sys/class/net/*/address | grep -c '^52:54:00:')" -ge 2 ] && break
  sleep 0.1
  i=$((i + 1))
done
data=
ctl=
for d in /sys/class/net/*; do
  case "$(cat "$d/address")" in
    52:54:00:77:*) data=${d##*/} ;;
    52:54:00:ee:*) ctl=${d##*/} ;;
  esac
done
[ -n "$data" ] && [ -n "$ctl" ] || { echo "lab-net: NICs not found" >&2; exit 1; }
ip link set "$data" down
ip link set "$ctl" down
ip link set "$data" name labdata
ip link set "$ctl" name labctl
ip link set labdata name eth0
ip link set labctl name eth1
ip link set eth1 up
ip addr add 198.51.100.15/24 dev eth1
ip link set eth0 mtu "$MTU" up
[ -n "$IP" ] && ip addr add "$IP" dev eth0
# The IPv6 address, usable at once (no duplicate address detection on the lab's bridge): rxe
# lists it as a RoCEv2 GID of rxe0, for the ipv6 cases.
[ -n "$IP6" ] && ip -6 addr add "$IP6" dev eth0 nodad
if [ "$RXE" = 1 ]; then
  modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0
fi
exit 0
