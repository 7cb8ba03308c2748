"""Every header and CM message builds, parses back with the same fields, and re-encodes to the
same bytes; computed fields fill themselves in unless given; bad values raise EncodeError."""

import os

import pytest

import roceconf
from roceconf import (AETH, BTH, DETH, GRH, IETH, IP, LRH, MAD, RDETH, RETH, UDP, XRCETH,
                      AtomicAckETH, AtomicETH, Dot1Q, Ether, FETH, ImmDt, IPv6, Raw)
from conftest import SOURCE_DIR

ROCE = Ether() / IP() / UDP()

# One packet per header: (stack, layer checked, fields set).
HEADERS = [
    (Ether(dst="02:aa:bb:cc:dd:ee", src="02:11:22:33:44:55") / IP() / UDP() / BTH(),
     Ether, {"dst": "02:aa:bb:cc:dd:ee", "src": "02:11:22:33:44:55"}),
    (Ether() / Dot1Q(prio=3, vlan=100) / IP() / UDP() / BTH(), Dot1Q, {"prio": 3, "vlan": 100}),
    (Ether() / IP(src="10.0.0.1", dst="10.0.0.2", ttl=7, tos=0x2a, id=99) / UDP() / BTH(),
     IP, {"src": "10.0.0.1", "dst": "10.0.0.2", "ttl": 7, "tos": 0x2a, "id": 99}),
    (Ether() / IPv6(src="fd00::1", dst="fd00::2", hlim=9, fl=0x12345) / UDP() / BTH(),
     IPv6, {"src": "fd00::1", "dst": "fd00::2", "hlim": 9, "fl": 0x12345}),
    (ROCE / BTH(), UDP, {"dport": 4791, "sport": 0xC000}),
    (LRH(dlid=5, slid=7, sl=2, lnh=2) / BTH(), LRH, {"dlid": 5, "slid": 7, "sl": 2}),
    (Ether(type=0x8915) / GRH(hoplmt=3, sgid="fe80::1", dgid="fe80::2") / BTH(),
     GRH, {"hoplmt": 3, "sgid": "fe80::1", "dgid": "fe80::2"}),
    (ROCE / BTH(opcode=0x04, psn=0xABCDEF, dqpn=0x123456, ackreq=1, solicited=1, pkey=0x8001,
                migreq=1, becn=1) / Raw(load=b"x" * 8),
     BTH, {"psn": 0xABCDEF, "dqpn": 0x123456, "ackreq": 1, "solicited": 1, "pkey": 0x8001}),
    (ROCE / BTH(opcode=0x44, dqpn=0x10) / RDETH(eecnxt=0x42) / DETH(qkey=5, srcqp=9), RDETH, {"eecnxt": 0x42}),
    (ROCE / BTH(opcode=0x64, dqpn=0x10) / DETH(qkey=0x1234, srcqp=0x77) / Raw(load=b"abcd"),
     DETH, {"qkey": 0x1234, "srcqp": 0x77}),
    (ROCE / BTH(opcode=0xA4) / XRCETH(xrcsrq=0x55) / Raw(load=b"abcd"), XRCETH, {"xrcsrq": 0x55}),
    (ROCE / BTH(opcode=0x0C) / RETH(va=0x1000, rkey=0x99, dmalen=4096), RETH,
     {"va": 0x1000, "rkey": 0x99, "dmalen": 4096}),
    (ROCE / BTH(opcode=0x14) / AtomicETH(va=0x2000, rkey=3, swap_add=7, compare=8), AtomicETH,
     {"va": 0x2000, "rkey": 3, "swap_add": 7, "compare": 8}),
    (ROCE / BTH(opcode=0x11) / AETH(syndrome=0x60, msn=0x10), AETH, {"syndrome": 0x60, "msn": 0x10}),
    (ROCE / BTH(opcode=0x12) / AETH() / AtomicAckETH(orig=0xFEED), AtomicAckETH, {"orig": 0xFEED}),
    (ROCE / BTH(opcode=0x05) / ImmDt(imm=0xCAFE) / Raw(load=b"abcd"), ImmDt, {"imm": 0xCAFE}),
    (ROCE / BTH(opcode=0x17) / IETH(rkey=0x4242) / Raw(load=b"abcd"), IETH, {"rkey": 0x4242}),
    (ROCE / BTH(opcode=0x1C) / FETH(sel=1, plt=2) / RETH(va=64, rkey=1), FETH, {"sel": 1, "plt": 2}),
    (ROCE / BTH() / Raw(load=b"payload!"), Raw, {"load": b"payload!"}),
]


@pytest.mark.parametrize("pkt,layer,fields", HEADERS, ids=[h[1].__name__ for h in HEADERS])
def test_every_header_builds_and_parses_back(pkt, layer, fields):
    data = bytes(pkt)
    parsed = roceconf.parse(data, link=247 if pkt.layers[0].__class__ is LRH else 1)
    assert layer in parsed
    for name, value in fields.items():
        assert getattr(parsed[layer], name) == value, name
    assert bytes(parsed) == data
    assert parsed.icrc_ok


CM = {
    "REQ": dict(local_comm_id=0x11, service_id=0x0106000000001D2F, local_qpn=0x123,
                starting_psn=0x456, path_mtu=5, primary_hop_limit=64,
                primary_local_gid="::ffff:192.0.2.1", private_data=b"\x00\x40" + b"\0" * 34),
    "MRA": dict(local_comm_id=1, remote_comm_id=2, message_mraed=1, service_timeout=20),
    "REJ": dict(local_comm_id=1, remote_comm_id=2, reason=8, message_rejected=0),
    "REP": dict(local_comm_id=3, remote_comm_id=4, local_qpn=0x77, starting_psn=9,
                responder_resources=4),
    "RTU": dict(local_comm_id=5, remote_comm_id=6),
    "DREQ": dict(local_comm_id=5, remote_comm_id=6, remote_qpn=0x88),
    "DREP": dict(local_comm_id=5, remote_comm_id=6),
    "SIDR_REQ": dict(request_id=7, service_id=0x1234, pkey=0xFFFF),
    "SIDR_REP": dict(request_id=7, qpn=0x99, qkey=0x1111, sidr_status=0, service_id=0x1234),
    "LAP": dict(local_comm_id=1, remote_comm_id=2, remote_qpn=3, alternate_hop_limit=2),
    "APR": dict(local_comm_id=1, remote_comm_id=2, ap_status=0),
    "ClassPortInfo": dict(base_version=1, class_version=2, resp_time_value=18),
}


@pytest.mark.parametrize("name", list(CM))
def test_every_cm_message_builds_and_parses_back(name):
    cls = roceconf.LAYERS[name]
    method = 0x01 if name == "ClassPortInfo" else 0x03
    pkt = ROCE / BTH() / MAD(tid=0x42, method=method) / cls(**CM[name])
    data = bytes(pkt)
    parsed = roceconf.parse(data)
    assert parsed[BTH].opcode == 0x64 and parsed[BTH].dqpn == 1  # UD SEND_ONLY to QP1
    assert parsed[DETH].qkey == 0x80010000
    assert parsed[MAD].tid == 0x42
    for field, value in CM[name].items():
        got = getattr(parsed[cls], field)
        if isinstance(value, bytes):
            assert got[:len(value)] == value
        else:
            assert got == value, field
    assert bytes(parsed) == data
    assert not [f for f in parsed.findings if f.severity == "error"]


def test_computed_fields_fill_themselves_in_unless_given():
    pkt = ROCE / BTH(opcode=0x04) / Raw(load=b"abc")  # 3 bytes: one pad byte
    parsed = roceconf.parse(bytes(pkt))
    assert parsed[BTH].padcount == 1
    assert parsed[IP].len == 20 + 8 + 12 + 4 + 4  # IP, UDP, BTH, payload + pad, ICRC
    assert parsed[UDP].len == 8 + 12 + 4 + 4
    assert parsed.icrc_ok
    # Given values are kept, even wrong ones.
    bad = ROCE / BTH(icrc=0x12345678) / Raw(load=b"abcd")
    with pytest.raises(roceconf.DecodeError) as e:
        roceconf.parse(bytes(bad), strict=True)
    assert "bad-icrc" in [f.code for f in e.value.findings]
    assert e.value.packet[BTH].icrc == 0x12345678
    short = ROCE / BTH() / Raw(load=b"abcd")
    short[IP].len = 40
    assert roceconf.parse(bytes(short), strict=False)[IP].len == 40


def test_editing_a_parsed_packet():
    data = bytes(ROCE / BTH(opcode=0x11, psn=1) / AETH(msn=1))
    pkt = roceconf.parse(data)
    pkt[BTH].psn = 2
    del pkt[BTH].icrc  # recomputed, as in Scapy
    again = roceconf.parse(bytes(pkt))
    assert again[BTH].psn == 2 and again.icrc_ok


def test_opcode_follows_the_next_header_like_scapy():
    assert roceconf.parse(bytes(ROCE / BTH() / AETH()))[BTH].opcode == 0x11
    assert roceconf.parse(bytes(ROCE / BTH() / RETH(va=0, rkey=1)))[BTH].opcode == 0x0C
    assert roceconf.parse(bytes(ROCE / BTH() / RETH(va=0, rkey=1) / b"abcd"))[BTH].opcode == 0x0A


def test_bad_values_raise_encode_error():
    with pytest.raises(roceconf.EncodeError, match="24 bits"):
        bytes(ROCE / BTH(psn=1 << 24))
    with pytest.raises(roceconf.EncodeError, match="no field 'sequence'"):
        BTH(sequence=1)
    with pytest.raises(roceconf.EncodeError, match="not a valid address"):
        bytes(Ether() / IP(src="300.1.1.1") / UDP() / BTH())
    with pytest.raises(roceconf.EncodeError, match="starts with"):
        bytes(BTH() / AETH())
    with pytest.raises(roceconf.LayerError):
        roceconf.parse(bytes(ROCE / BTH()))[AETH]
    with pytest.raises(IndexError):  # LayerError is an IndexError, as in Scapy
        roceconf.parse(bytes(ROCE / BTH()))[RETH]


def test_bytes_of_a_parsed_frame_are_the_frame(gen_capture):
    n = 0
    for pkt in roceconf.read_pcap(gen_capture):
        for layer in pkt.layers:
            layer.fields()
        assert bytes(pkt) == pkt._frame.data, pkt.summary()
        n += 1
    assert n == 2000


def test_real_session_capture():
    path = os.path.join(SOURCE_DIR, "samples", "rc-session.pcapng")
    pkts = list(roceconf.read_pcap(path))
    assert pkts and all(p.icrc_ok for p in pkts)
    assert any("REQ" in p for p in pkts) and any("AtomicAckETH" in p for p in pkts)
    for p in pkts:
        assert bytes(p) == p._frame.data
    assert pkts[0].time_ns > 0


def test_type_stubs_name_every_class_and_docstrings_describe_them():
    import re
    stub = open(os.path.join(os.path.dirname(roceconf.__file__), "__init__.pyi")).read()
    stubbed = set(re.findall(r"^class (\w+)\(Layer\)", stub, re.M))
    assert set(roceconf.LAYERS) == stubbed
    for name, cls in roceconf.LAYERS.items():
        assert cls.__doc__ and "Fields:" in cls.__doc__, name
    assert os.path.exists(os.path.join(os.path.dirname(roceconf.__file__), "py.typed"))
    assert roceconf.parse.__doc__ and roceconf.Target.reference.__doc__
