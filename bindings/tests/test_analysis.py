"""read_pcap(..., analyze=True): each packet carries the stream analysis `roceconf decode --json`
prints under "analysis" (the same StreamAnalyzer, the same keys), plus the judgements a later
frame makes about it (acked-by, nak-received), as the Wireshark plugin shows them."""

import json
import os
import struct
import subprocess

import pytest

import roceconf
from conftest import SOURCE_DIR

LATER = {"acked-by", "nak-received"}  # added to a request when its answer arrives
SHARED = os.path.join(SOURCE_DIR, "..", "shared", "captures")


def decoded(cli, path):
    r = subprocess.run([cli, "decode", "--json", path], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def same_as_decode_json(cli, path):
    lines = decoded(cli, path)
    packets = list(roceconf.read_pcap(path, analyze=True))
    assert len(packets) == len(lines)
    later = 0
    for n, (line, pkt) in enumerate(zip(lines, packets), 1):
        got = pkt.analysis
        if got is not None:
            got = dict(got)
            later += sum(f["name"] in LATER for f in got["flags"])
            got["flags"] = [f for f in got["flags"] if f["name"] not in LATER]
        assert got == line.get("analysis"), f"{path} frame {n}"
    return packets, later


def test_generated_capture(roceconf_cli, gen_capture):
    packets, later = same_as_decode_json(roceconf_cli, gen_capture)
    analysed = [p.analysis for p in packets if p.analysis]
    assert any(a.get("role") == "request" and "psn" in a for a in analysed)
    assert any(a.get("role") == "response" for a in analysed)
    assert any("cm_message" in a for a in analysed)
    assert later > 0  # requests learn which response answered them


def write_pcap(path, frames):
    """A classic pcap of Ethernet frames, 1 µs apart."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000, i, len(frame), len(frame)) + frame)


def test_answers_reach_the_request(tmp_path):
    # One RC SEND and its ACK: the request's analysis names the ACK's frame, the ACK the request.
    there = roceconf.Ether() / roceconf.IP(src="192.0.2.1", dst="192.0.2.2") / roceconf.UDP()
    back = roceconf.Ether() / roceconf.IP(src="192.0.2.2", dst="192.0.2.1") / roceconf.UDP()
    frames = [bytes(there / roceconf.BTH(opcode="RC_SEND_ONLY", dqpn=0x11, psn=7, ackreq=1)
                    / roceconf.Raw(b"abcd")),
              bytes(back / roceconf.BTH(opcode="RC_ACKNOWLEDGE", dqpn=0x22, psn=7)
                    / roceconf.AETH(syndrome="ACK", msn=1))]
    path = str(tmp_path / "two.pcap")
    write_pcap(path, frames)
    req, ack = roceconf.read_pcap(path, analyze=True)
    assert req.analysis["role"] == "request", req.analysis
    assert [f["name"] for f in req.analysis["flags"]] == ["acked-by"], req.analysis
    assert req.analysis["flags"][0]["text"].startswith("acked by frame 2")
    assert ack.analysis["role"] == "response" and ack.analysis["ack_frame"] == 1, ack.analysis
    assert "acked-by" in req.show(dump=True)
    # Not asked for: no analysis.
    assert all(p.analysis is None for p in roceconf.read_pcap(path))


@pytest.mark.parametrize("name", ["rxe_ib_write_bw_rc_loss_nak.pcap",
                                  "montybeatnik_roce_capture_read-write-ecn.pcap",
                                  "srinivaskoritala_infiniband.pcap"])
def test_real_captures(roceconf_cli, name):
    path = os.path.join(SHARED, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} absent (the shared captures sit next to the checkout)")
    packets, _ = same_as_decode_json(roceconf_cli, path)
    if name.startswith("rxe"):  # a lossy transfer: NAKs and the requests they refuse
        flags = {f["name"] for p in packets if p.analysis for f in p.analysis["flags"]}
        assert {"nak-seq-error", "out-of-sequence", "acked-by"} <= flags, flags
