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


# ---- names, constants, positional Raw, text forms, copies ----

def test_raw_takes_its_load_by_position():
    assert Raw(b"abc").load == b"abc"
    assert bytes(ROCE / BTH() / Raw(b"abc")) == bytes(ROCE / BTH() / Raw(load=b"abc"))
    with pytest.raises(TypeError, match="positional"):
        Raw(b"a", b"b")
    with pytest.raises(TypeError, match="by keyword"):
        BTH(5)


def test_symbolic_names_encode_as_their_numbers():
    by_name = ROCE / BTH(opcode="RC_ACKNOWLEDGE") / AETH(syndrome="NAK_PSN_SEQUENCE_ERROR")
    by_number = ROCE / BTH(opcode=0x11) / AETH(syndrome=0x60)
    assert bytes(by_name) == bytes(by_number)
    p = roceconf.parse(bytes(by_name))
    assert p[AETH].syndrome == 0x60 and p[AETH].syndrome_name == "NAK_PSN_SEQUENCE_ERROR"
    # Case-insensitive, or the constants; REJ reasons as the table spells them or identifiers.
    assert bytes(ROCE / BTH(opcode="rc_acknowledge") / AETH(
        syndrome=roceconf.Syndrome.NAK_PSN_SEQUENCE_ERROR)) == bytes(by_number)
    rej = [bytes(Ether() / IP() / UDP() / BTH() / MAD(tid=1) / roceconf.REJ(reason=r))
           for r in ("Invalid Service ID", "INVALID_SERVICE_ID", roceconf.RejReason.INVALID_SERVICE_ID, 8)]
    assert len(set(rej)) == 1
    assert roceconf.parse(rej[0])[roceconf.REJ].reason == 8
    mad = roceconf.parse(bytes(Ether() / IP() / UDP() / BTH() / MAD(tid=1, attr_id="REQ")
                               / roceconf.REQ()))
    assert mad[MAD].attr_id == roceconf.CmMessage.REQ == 0x10
    a = AETH()
    a.syndrome = "RNR_NAK"
    assert a.syndrome == 0x20


def test_unknown_names_fail_where_they_are_given():
    with pytest.raises(roceconf.EncodeError, match="AETH.syndrome: unknown name 'NAK_BOGUS'"):
        AETH(syndrome="NAK_BOGUS")
    with pytest.raises(roceconf.EncodeError, match="BTH.psn: expected an integer"):
        BTH(psn="five")
    b = BTH()
    with pytest.raises(roceconf.EncodeError, match="unknown name"):
        b.opcode = "RC_TELEPORT"


def test_constants_come_from_the_codec_tables():
    table = next(f["values"] for f in roceconf._roceconf.field_table()
                 if f["layer"] == "bth" and f["name"] == "opcode")  # {value: name}
    first = {}  # each name at its first value (MANUFACTURER_SPECIFIC spans 0xE0-0xFF)
    for value, name in sorted(table.items()):
        first.setdefault(name, value)
    assert {o.label: int(o) for o in roceconf.Opcode} == first
    assert roceconf.Opcode.RC_SEND_ONLY == 0x04 and roceconf.Opcode.CNP == 0x81
    assert roceconf.Syndrome.NAK_PSN_SEQUENCE_ERROR == 0x60
    assert roceconf.Syndrome.RNR_NAK == 0x20 and roceconf.Syndrome.ACK == 0x00
    assert [(n.name, int(n)) for n in roceconf.NakCode] == [
        ("PSN_SEQUENCE_ERROR", 0), ("INVALID_REQUEST", 1), ("REMOTE_ACCESS_ERROR", 2),
        ("REMOTE_OPERATIONAL_ERROR", 3), ("INVALID_RD_REQUEST", 4)]
    assert roceconf.CmMessage.REP == 0x13 and roceconf.CmMessage.CLASS_PORT_INFO == 0x01
    assert roceconf.RejReason.NO_QP_AVAILABLE == 1
    assert roceconf.RejReason.NO_QP_AVAILABLE.label == "No QP available"
    assert roceconf.RejReason.VENDOR_OPTION_NOT_SUPPORTED == 35


def hex_fields(layer):
    return {f["name"].replace(".", "_") for f in roceconf._roceconf.field_table()
            if f["hex"] and any(c == layer for c, _ in f["python"])}


def test_one_base_per_field_in_repr_show_and_summary():
    pkt = ROCE / BTH(psn=5, dqpn=0x12) / AETH(msn=3)
    p = roceconf.parse(bytes(pkt))
    # The table: psn and dqpn are hex, msn decimal; small and large values alike.
    assert {"psn", "dqpn", "opcode"} <= hex_fields("BTH") and "msn" not in hex_fields("AETH")
    for psn, msn in ((5, 3), (0x10, 12), (0xABCDEF, 1000)):
        p[BTH].psn = psn
        p[AETH].msn = msn
        r = repr(p)
        assert f"psn={hex(psn)}" in r and f"msn={msn}" in r, r
        shown = p.show(dump=True)
        assert f"psn                      = {hex(psn)}\n" in shown, shown
        assert f"msn                      = {msn}\n" in shown
        assert "opcode                   = RC_ACKNOWLEDGE (0x11)" in shown
        s = p.summary()
        assert f"psn={hex(psn)}" in s and f"msn={msn}" in s and "dqpn=0x12" in s, s
        assert s.startswith("Ether / IP ") and " / BTH RC_ACKNOWLEDGE " in s, s
        # Edited, the ICRC as read is stale: the summary is of the bytes as they are now.
        icrc = "ok" if (psn, msn) == (5, 3) else "bad [bad-icrc]"
        assert s.endswith(f" / AETH ACK msn={msn} / ICRC {icrc}"), s


def test_show2_hexdump_and_copy():
    pkt = ROCE / BTH(psn=5) / Raw(b"abc")
    assert "padcount                 = None" in pkt.show(dump=True)
    assert "padcount                 = 1\n" in pkt.show2(dump=True)  # built: computed fields in
    dump = pkt.hexdump(dump=True)
    data = bytes(pkt)
    assert dump.splitlines()[0].startswith("0000  " + " ".join(f"{b:02X}" for b in data[:16]))
    assert len(dump.splitlines()) == (len(data) + 15) // 16
    assert "abc" in dump.replace("\n", "")
    p = roceconf.parse(data)
    q = p.copy()
    assert bytes(q) == data and q is not p
    q[BTH].psn = 6
    assert p[BTH].psn == 5 and bytes(p) == data and roceconf.parse(bytes(q))[BTH].psn == 6
    c = pkt.copy()
    c[BTH].psn = 9
    assert pkt[BTH].psn == 5
