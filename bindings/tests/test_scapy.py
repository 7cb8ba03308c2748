"""Byte-identical with Scapy's contrib/roce for the same fields: Ether/IP/UDP/BTH/AETH and BTH
with payload, ICRC included; and Scapy's frames parse here with the same field values."""

import random

import pytest

import roceconf
from roceconf import AETH, BTH, IP, UDP, Ether, Raw

scapy_all = pytest.importorskip("scapy.all")
scapy_roce = pytest.importorskip("scapy.contrib.roce")
S = scapy_all


def random_fields(rng):
    return dict(
        eth=dict(dst="02:%02x:00:00:00:02" % rng.randrange(256), src="02:00:00:00:00:01"),
        ip=dict(src="192.0.2.%d" % rng.randrange(1, 255), dst="192.0.2.%d" % rng.randrange(1, 255),
                id=rng.randrange(1 << 16), ttl=rng.randrange(1, 256), tos=rng.randrange(256)),
        udp=dict(sport=rng.randrange(1 << 16)),
        bth=dict(psn=rng.randrange(1 << 24), dqpn=rng.randrange(1 << 24),
                 pkey=rng.randrange(1 << 16), ackreq=rng.randrange(2), solicited=rng.randrange(2),
                 migreq=rng.randrange(2), fecn=rng.randrange(2), becn=rng.randrange(2)),
        aeth=dict(syndrome=rng.choice([0x1F, 0x00, 0x60, 0x61, 0x62, 0x63]),
                  msn=rng.randrange(1 << 24)),
    )


def scapy_packet(f, payload=None):
    pkt = (S.Ether(type=0x0800, **f["eth"]) / S.IP(flags="DF", **f["ip"]) /
           S.UDP(dport=4791, chksum=0, **f["udp"]))
    if payload is None:
        return pkt / scapy_roce.BTH(opcode=0x11, **f["bth"]) / scapy_roce.AETH(**f["aeth"])
    return pkt / scapy_roce.BTH(opcode=0x04, **f["bth"]) / S.Raw(load=payload)


def our_packet(f, payload=None):
    pkt = Ether(**f["eth"]) / IP(flags="DF", **f["ip"]) / UDP(dport=4791, chksum=0, **f["udp"])
    if payload is None:
        return pkt / BTH(opcode=0x11, **f["bth"]) / AETH(**f["aeth"])
    return pkt / BTH(opcode=0x04, **f["bth"]) / Raw(load=payload)


@pytest.mark.parametrize("seed", range(40))
def test_bth_aeth_identical_to_scapy(seed):
    f = random_fields(random.Random(seed))
    theirs = bytes(scapy_packet(f))
    ours = bytes(our_packet(f))
    assert ours == theirs
    parsed = roceconf.parse(theirs)  # Scapy's ICRC checks here
    assert parsed.icrc_ok
    for k, v in f["bth"].items():
        assert getattr(parsed[BTH], k) == v
    assert parsed[AETH].syndrome == f["aeth"]["syndrome"] and parsed[AETH].msn == f["aeth"]["msn"]


@pytest.mark.parametrize("length", [0, 4, 8, 64, 1024])
def test_send_with_payload_and_icrc_identical_to_scapy(length):
    f = random_fields(random.Random(1000 + length))
    payload = bytes(range(256)) * (length // 256) + bytes(range(length % 256))
    theirs = bytes(scapy_packet(f, payload))
    assert bytes(our_packet(f, payload)) == theirs
    parsed = roceconf.parse(theirs)
    assert (parsed[Raw].load if payload else b"") == payload
    assert parsed.icrc_ok


def test_scapy_reads_our_frames():
    f = random_fields(random.Random(99))
    ours = bytes(our_packet(f))
    theirs = S.Ether(ours)
    assert theirs[scapy_roce.BTH].psn == f["bth"]["psn"]
    assert theirs[scapy_roce.AETH].msn == f["aeth"]["msn"]
    carried = theirs[scapy_roce.BTH].icrc
    del theirs[scapy_roce.BTH].icrc
    assert S.Ether(bytes(theirs))[scapy_roce.BTH].icrc == carried  # Scapy recomputes ours
