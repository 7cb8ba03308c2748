"""Property: any bytes parse into a packet or raise a roceconf.Error subclass, never anything
else; a packet that comes back can be read field by field and re-encoded."""

import random

import pytest

import roceconf
from roceconf import AETH, BTH, IP, MAD, REQ, RETH, UDP, Ether, Raw

VALID = [
    bytes(Ether() / IP() / UDP() / BTH(opcode=0x11, psn=3) / AETH(msn=2)),
    bytes(Ether() / IP() / UDP() / BTH(opcode=0x0A) / RETH(va=64, rkey=5) / Raw(load=b"x" * 64)),
    bytes(Ether() / IP() / UDP() / BTH() / MAD(tid=1) / REQ(service_id=0x1234)),
]


def check(data, link=1):
    try:
        pkt = roceconf.parse(data, link=link)
    except roceconf.DecodeError as e:
        assert isinstance(e, roceconf.Error) and str(e)
        pkt = e.packet
    for layer in pkt.layers:
        layer.fields()
    pkt.findings
    pkt.summary()
    try:
        bytes(pkt)
    except roceconf.EncodeError:
        pass


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes(seed):
    rng = random.Random(seed)
    for _ in range(500):
        n = rng.choice([0, 1, 13, 14, 33, 41, 54, 60, 100, 300, rng.randrange(2000)])
        link = rng.choice([1, 101, 113, 197, 247, 276])
        check(bytes(rng.randrange(256) for _ in range(n)), link)


@pytest.mark.parametrize("seed", range(8))
def test_mutated_valid_frames(seed):
    rng = random.Random(seed)
    raised = 0
    for _ in range(500):
        frame = bytearray(rng.choice(VALID))
        for _ in range(rng.randrange(1, 4)):
            what = rng.randrange(3)
            if not frame:
                break
            if what == 0:
                frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
            elif what == 1:
                del frame[rng.randrange(len(frame)):]
            else:
                frame += bytes(rng.randrange(256) for _ in range(rng.randrange(8)))
        try:
            roceconf.parse(bytes(frame), strict=True)
        except roceconf.DecodeError:
            raised += 1
        check(bytes(frame))
    assert raised > 100  # most mutations break a length or the ICRC


def test_decode_errors_name_the_problem():
    with pytest.raises(roceconf.DecodeError, match="ip-length in ipv4"):
        roceconf.parse(VALID[0][:40])
    with pytest.raises(roceconf.DecodeError, match="truncated"):
        roceconf.parse(VALID[0][:20])
    with pytest.raises(roceconf.DecodeError, match="link type 9"):
        roceconf.parse(VALID[0], link=9)
    with pytest.raises(TypeError):
        roceconf.parse("not bytes")
    assert issubclass(roceconf.DecodeError, ValueError)


def test_capture_errors(tmp_path):
    with pytest.raises(roceconf.CaptureError):
        list(roceconf.read_pcap(tmp_path / "missing.pcap"))
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(range(200)))
    with pytest.raises(roceconf.CaptureError):
        list(roceconf.read_pcap(junk))
