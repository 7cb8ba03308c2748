"""Lossless round trip: bytes(parse(b, strict=False)) == b for any input, what could not be
decoded kept as raw bytes (an Undecoded layer, never a zero-filled header), and parse() raising
by default only for bytes that are not a well-framed packet."""

import random
import struct

import pytest

import roceconf
from roceconf import AETH, BTH, IP, RETH, UDP, Ether, Raw, Undecoded

ROCE = Ether() / IP() / UDP()


def pcap_frames(path):
    """The records of a classic pcap file (what roceconf-gen writes), as bytes."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    frames, off = [], 24
    while off + 16 <= len(data):
        caplen = struct.unpack(order + "I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return frames


def corpus(valid, seed):
    """The valid frames, each cut short three ways and broken twice, plus random bytes."""
    rng = random.Random(seed)
    out = []
    for frame in valid:
        out.append(("valid", frame))
        for _ in range(3):
            out.append(("truncated", frame[:rng.randrange(len(frame))]))
        for _ in range(2):
            b = bytearray(frame)
            for _ in range(rng.randrange(1, 4)):
                what = rng.randrange(4)
                if what == 0:
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
                elif what == 1:
                    b[rng.randrange(len(b))] = rng.randrange(256)
                elif what == 2:
                    del b[rng.randrange(len(b)):]
                else:
                    b += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
                if not b:
                    break
            out.append(("mutated", bytes(b)))
    for _ in range(1000):
        n = rng.choice([0, 1, 13, 14, 33, 41, 54, 60, 100, 300, rng.randrange(2000)])
        out.append(("random", bytes(rng.randrange(256) for _ in range(n))))
    return out


def test_ten_thousand_frames_round_trip_byte_for_byte(gen_capture):
    valid = pcap_frames(gen_capture)
    assert len(valid) == 2000
    frames = corpus(valid, 15)
    assert len(frames) >= 10000
    undecoded = reencoded = 0
    for kind, data in frames:
        pkt = roceconf.parse(data, strict=False)
        assert bytes(pkt) == data, (kind, data.hex())
        # Reading every layer changes nothing.
        layers = pkt.layers
        for layer in layers:
            layer.fields()
        assert bytes(pkt) == data, (kind, data.hex())
        names = [type(l).__name__ for l in layers]
        if "Undecoded" in names:
            undecoded += 1
            u = pkt[Undecoded]
            assert names[-1] == "Undecoded"
            assert u.load == data[u.offset:]
        # A well-formed frame re-encodes from its layers to the same bytes, and so does a frame
        # cut short: the layers before the cut, then its bytes as they came.
        if kind in ("valid", "truncated") and names:
            try:
                again = pkt._encode()
            except roceconf.EncodeError:
                again = None
            if again == data:
                reencoded += 1
            elif kind == "valid":
                pytest.fail(f"valid frame does not re-encode: {data.hex()}")
    assert undecoded > 1000
    assert reencoded > 5000


def test_truncated_reth_stays_raw():
    frame = bytes(ROCE / BTH(opcode=0x0A, psn=7) / RETH(va=0x1000, rkey=5, dmalen=64)
                  / Raw(load=b"x" * 64))
    reth_at = 14 + 20 + 8 + 12
    short = frame[:reth_at + 8]  # 8 of the 16 RETH bytes
    pkt = roceconf.parse(short, strict=False)
    assert bytes(pkt) == short
    names = [type(l).__name__ for l in pkt.layers]
    assert "RETH" not in names and names[-1] == "Undecoded"
    assert pkt[Undecoded].offset == reth_at
    assert pkt[Undecoded].load == short[reth_at:]
    assert "truncated" in [f.code for f in pkt.findings]
    # An edit re-encodes the headers before the cut and keeps the rest as it came.
    pkt[BTH].psn = 8
    edited = bytes(pkt)
    assert len(edited) == len(short)
    assert edited[reth_at:] == short[reth_at:]
    assert edited[reth_at - 3:reth_at] == b"\x00\x00\x08"
    with pytest.raises(roceconf.DecodeError) as e:
        roceconf.parse(short)  # not a well-framed packet: raises by default
    assert {"truncated", "ip-length"} <= {f.code for f in e.value.findings}


def test_reserved_values_are_findings_not_errors():
    frame = bytes(ROCE / BTH(opcode=0x11, psn=3) / AETH(syndrome=0x78, msn=1))
    pkt = roceconf.parse(frame)  # well framed: no exception by default
    assert pkt[AETH].syndrome == 0x78
    assert "reserved-syndrome" in [f.code for f in pkt.findings]
    assert bytes(pkt) == frame
    with pytest.raises(roceconf.DecodeError, match="reserved-syndrome") as e:
        roceconf.parse(frame, strict=True)
    assert e.value.packet[AETH].syndrome == 0x78
    # A bad ICRC is a wrong value too.
    bad = bytes(ROCE / BTH(icrc=0x12345678) / Raw(load=b"abcd"))
    assert not roceconf.parse(bad).icrc_ok
    with pytest.raises(roceconf.DecodeError, match="bad-icrc"):
        roceconf.parse(bad, strict=True)


def test_edits_still_take_effect():
    frame = bytes(ROCE / BTH(opcode=0x11, psn=1) / AETH(msn=1))
    pkt = roceconf.parse(frame)
    pkt[AETH].msn = 2
    assert bytes(pkt) != frame
    assert roceconf.parse(bytes(pkt), strict=False)[AETH].msn == 2
    # Removing a layer from the list is an edit too.
    pkt = roceconf.parse(frame)
    pkt.layers.pop()
    assert bytes(pkt) != frame
    # Setting a field to the value it had is not.
    pkt = roceconf.parse(frame)
    pkt[UDP].sport = pkt[UDP].sport
    assert bytes(pkt) == frame
