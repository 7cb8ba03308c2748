"""Every field of the codec's field table reaches Python and Wireshark under its one name.

For each field: the Python class showing its layer has an attribute of that name reading what
visit_fields() decodes from a sample packet, and the Wireshark plugin's
`roceconf.<layer>.<name>` filters on it and shows the same value (one tshark run per link type
over a pcapng of the samples). A field no sample carries is skipped with the reason, never left out silently.
"""

import ipaddress
import os
import shutil
import struct
import subprocess
import tempfile

import pytest

import roceconf
from roceconf import _roceconf as core
from roceconf import (AETH, APR, BTH, DETH, DREP, DREQ, FETH, GRH, IETH, IP, LAP, LRH, MAD, MRA,
                      RDETH, REJ, REP, REQ, RETH, RTU, SIDR_REP, SIDR_REQ, UDP, XRCETH,
                      AtomicAckETH, AtomicETH, ClassPortInfo, Dot1Q, Ether, ImmDt, IPv6, Raw)

TABLE = core.field_table()
ETHERNET, INFINIBAND = 1, 247
ROCE = Ether() / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=0xC001)
# An rdma_cm REQ: service ID of the TCP port space, private data with an IPv4 rdma_cm header.
RDMA_CM_REQ = REQ(local_comm_id=0x11, service_id=0x0000000001061D2F, local_qpn=0x123,
                  private_data=b"\x00\x40\x12\x34" + b"\0" * 12 + bytes([10, 0, 0, 1]) +
                  b"\0" * 12 + bytes([10, 0, 0, 2]) + b"\0" * 20)


def _samples():
    """(link, bytes) of packets that between them carry every layer the codec decodes."""
    built = [
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / Dot1Q(prio=3, vlan=100) /
        Dot1Q(vlan=200) / IP(src="192.0.2.1", dst="192.0.2.2", ttl=9, dscp=26, ecn=1) / UDP() /
        BTH(opcode=0x0A, psn=0x123456, dqpn=0x12, solicited=1, pkey=0x8001) /
        RETH(va=0x1000, rkey=0x99) / Raw(load=b"payload!"),
        Ether() / IPv6(src="fd00::1", dst="fd00::2", fl=0x12345) / UDP() /
        BTH(opcode=0x11, psn=5) / AETH(syndrome=0x05, msn=3),  # ACK with credits
        ROCE / BTH(opcode=0x11) / AETH(syndrome=0x2E, msn=4),  # RNR NAK: the timer
        ROCE / BTH(opcode=0x11) / AETH(syndrome=0x60),  # NAK: a syndrome name
        ROCE / BTH(opcode=0x44, dqpn=0x10) / RDETH(eecnxt=0x42) / DETH(qkey=5, srcqp=9),
        ROCE / BTH(opcode=0x64) / DETH(qkey=0x1234, srcqp=0x77) / Raw(load=b"abcd"),
        ROCE / BTH(opcode=0xA4) / XRCETH(xrcsrq=0x55) / Raw(load=b"abcd"),
        ROCE / BTH(opcode=0x14) / AtomicETH(va=0x2000, rkey=3, swap_add=7, compare=8),
        ROCE / BTH(opcode=0x12) / AETH() / AtomicAckETH(orig=0xFEED),
        ROCE / BTH(opcode=0x05) / ImmDt(imm=0xCAFE) / Raw(load=b"abcd"),
        ROCE / BTH(opcode=0x17) / IETH(rkey=0x4242) / Raw(load=b"abcd"),
        ROCE / BTH(opcode=0x1C) / FETH(sel=1, plt=2) / RETH(va=64, rkey=1),
        ROCE / BTH(icrc=0x12345678) / Raw(load=b"abcd"),  # a wrong ICRC, shown as carried
        Ether(type=0x8915) / GRH(hoplmt=3, sgid="fe80::1", dgid="fe80::2") / BTH(),
    ]
    out = [(ETHERNET, bytes(p)) for p in built]
    ib = LRH(dlid=5, slid=7, sl=2, lnh=3, vcrc=0x1234) / GRH(sgid="fe80::1") / BTH() / b"abcd"
    out.append((INFINIBAND, bytes(ib)))  # a wrong VCRC, shown as carried
    cm = [RDMA_CM_REQ, MRA(service_timeout=20), REJ(reason=8), REP(local_qpn=0x77), RTU(),
          DREQ(remote_qpn=0x88), DREP(), SIDR_REQ(service_id=0x1234), SIDR_REP(qpn=0x99),
          LAP(remote_qpn=3), APR(ap_status=1), ClassPortInfo(resp_time_value=18)]
    for msg in cm:
        method = 0x01 if isinstance(msg, ClassPortInfo) else 0x03
        out.append((ETHERNET, bytes(ROCE / BTH() / MAD(tid=0x42, method=method) / msg)))
    return out


SAMPLES = _samples()
VISITED = [core.visit_fields(data, link) for link, data in SAMPLES]


def _carriers(field):
    """[(sample index, [values in order])] of the samples whose decode has the field."""
    out = []
    for i, fields in enumerate(VISITED):
        values = [v for layer, name, v in fields if layer == field["layer"] and name == field["name"]]
        if values:
            out.append((i, values))
    return out


def _skip_reason(field):
    if not any(layer == field["layer"] for fields in VISITED for layer, _, _ in fields):
        return f"no sample packet carries layer {field['layer']}"
    return (f"no sample packet has {field['key']} (the codec gives it only for some values of "
            "the layer)")


@pytest.mark.parametrize("field", TABLE, ids=[f["key"] for f in TABLE])
def test_python_attribute_reads_what_the_codec_decodes(field):
    assert field["python"], f"no Python class shows {field['key']}"
    name = field["name"].replace(".", "_")
    # The table's name; a trailer's (icrc, vcrc) on the header it follows: BTH.icrc, BTH.icrc_ok.
    trailer = {field["layer"] + "_" + name} | ({field["layer"]} if name == "value" else set())
    for cls, attr in field["python"]:
        assert attr in roceconf.LAYERS[cls]._fields, (cls, attr)
        assert attr == name or attr in trailer, (cls, attr)
    carriers = _carriers(field)
    if not carriers:
        pytest.skip(_skip_reason(field))
    for i, values in carriers:
        link, data = SAMPLES[i]
        parsed = roceconf.parse(data, link=link, strict=False)
        got = []
        for cls, attr in field["python"]:
            n = 1
            while (layer := parsed.getlayer(cls, n)) is not None:
                got.append(getattr(layer, attr))
                n += 1
        assert [v for v in got if v is not None] == values, f"sample {i}"


# ---- Wireshark --------------------------------------------------------------------------------

def _pcapng(path, link, frames):
    """One section, one interface of `link`, the frames in order."""
    def block(kind, body):
        return struct.pack("<II", kind, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", link, 0, 262144))
    for n, data in enumerate(frames):
        padded = data + b"\0" * (-len(data) % 4)
        out += block(6, struct.pack("<IIIII", 0, 0, n, len(data), len(data)) + padded)
    with open(path, "wb") as f:
        f.write(out)
    os.chmod(path, 0o644)


@pytest.fixture(scope="module")
def tshark_fields():
    """{frame index: {abbrev: text}} from one tshark run, or the reason it cannot run."""
    plugins = os.environ.get("ROCECONF_WIRESHARK_PLUGIN_DIR")
    if not plugins or not os.path.isdir(plugins):
        return "the Wireshark plugin is not built (set ROCECONF_WIRESHARK_PLUGIN_DIR)"
    if not shutil.which("tshark"):
        return "tshark not installed (apt-get install tshark)"
    prefix = []
    if os.geteuid() == 0:  # tshark run by root ignores WIRESHARK_PLUGIN_DIR
        if not shutil.which("setpriv"):
            return "running as root needs setpriv (util-linux) to run tshark unprivileged"
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    abbrevs = ["roceconf." + f["key"] for f in TABLE]
    out = {}
    with tempfile.TemporaryDirectory() as home:
        os.chmod(home, 0o755)
        # One capture (and run) per link type; tshark 4.0 reads no pcapng of link type 247
        # (InfiniBand): the fields only the native IB sample carries are skipped below.
        for link in sorted({link for link, _ in SAMPLES} - {INFINIBAND}):
            index = [i for i, (l, _) in enumerate(SAMPLES) if l == link]
            capture = os.path.join(home, f"samples-{link}.pcapng")
            _pcapng(capture, link, [SAMPLES[i][1] for i in index])
            cmd = prefix + ["env", f"HOME={home}", f"WIRESHARK_PLUGIN_DIR={plugins}",
                            "LC_ALL=C.UTF-8", "tshark", "-r", capture,
                            "-Y", " || ".join(abbrevs),
                            "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
                            "-E", "separator=/t", "-e", "frame.number"]
            for a in abbrevs:
                cmd += ["-e", a]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr
            assert "roceconf" not in r.stderr, r.stderr  # no field refused, no plugin warning
            for line in r.stdout.splitlines():
                cols = line.split("\t")
                out[index[int(cols[0]) - 1]] = dict(zip(abbrevs, cols[1:]))
    assert len(out) == sum(link != INFINIBAND for link, _ in SAMPLES), "a sample has no field"
    return out


def _same(field, text, value):
    kind = field["type"]
    if kind in ("unsigned", "bool"):
        if text in ("True", "False"):
            return (text == "True") == bool(value)
        return int(text, 0) == int(value)
    if kind == "bytes":
        return bytes.fromhex(text.replace(":", "")) == value
    if kind in ("ipv4", "ipv6"):
        shown, decoded = ipaddress.ip_address(text), ipaddress.ip_address(value)
        if shown.version == 6 and decoded.version == 4:  # IPv4 in an IPv6 field: mapped
            shown = shown.ipv4_mapped
        return shown == decoded
    if kind == "mac":
        return text.lower() == value.lower()
    return text == value


@pytest.mark.parametrize("field", TABLE, ids=[f["key"] for f in TABLE])
def test_wireshark_filters_on_it_and_shows_the_value(field, tshark_fields):
    if isinstance(tshark_fields, str):
        pytest.skip(tshark_fields)
    carriers = _carriers(field)
    if not carriers:
        pytest.skip(_skip_reason(field))
    abbrev = "roceconf." + field["key"]
    carriers = [(i, values) for i, values in carriers if i in tshark_fields]
    if not carriers:
        pytest.skip(f"only the InfiniBand sample carries {field['key']}, and tshark reads no "
                    "pcapng of link type 247")
    shown = 0
    for i, values in carriers:
        text = tshark_fields[i][abbrev]
        if not text:  # the plugin's own ICRC/VCRC value shows only when it is wrong
            continue
        shown += 1
        texts = text.split(",") if field["type"] not in ("name",) or len(values) > 1 else [text]
        assert len(texts) == len(values), (i, text, values)
        for t, v in zip(texts, values):
            assert _same(field, t, v), (i, abbrev, t, v)
    assert shown, f"{abbrev} is on no frame that carries it"
