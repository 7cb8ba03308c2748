"""How packets read as text: repr, show(), summary() and hexdump().

One base per field everywhere: a number is hexadecimal when the codec's field table says so
(identifiers, keys, PSNs, checksums) and decimal otherwise, and a value with a name in the
table (opcodes, syndromes, REJ reasons, ...) shows that name beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:  # packet.py imports this module
    from .packet import Layer, Packet

__all__ = ["value_text", "show_text", "summary_text", "hexdump_text"]


def value_text(layer: "Layer", name: str, value: Any) -> str:
    """A field's value in its base (repr's form: numbers, quoted strings and bytes)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return hex(value) if name in type(layer)._hex else str(int(value))
    return repr(value)


def _named(layer: "Layer", name: str, value: Any) -> str:
    """The value with the table's name of it first: "RC_ACKNOWLEDGE (0x11)"."""
    text = value_text(layer, name, value)
    label = type(layer)._names.get(name, {}).get(value) if isinstance(value, int) else None
    return f"{label} ({text})" if label else text


def show_text(packet: "Packet") -> str:
    lines: List[str] = []
    for layer in packet.layers:
        lines.append(f"###[ {type(layer).__name__} ]###")
        for k, v in layer.fields().items():
            lines.append(f"  {k:<24} = {_named(layer, k, v)}")
    for f in packet.findings:
        lines.append(f"  !! {f.severity} {f.code} at {f.offset}: {f.message}")
    analysis = packet.analysis
    if analysis:
        for f in analysis.get("flags", []):
            lines.append(f"  ~~ {f['severity']} {f['name']}: {f['text']}")
    return "\n".join(lines)


# What the one-line summary shows of each layer (values as show() has them).
_ROUTES = {"IP": ("src", "dst"), "IPv6": ("src", "dst"), "UDP": ("sport", "dport"),
           "LRH": ("slid", "dlid"), "GRH": ("sgid", "dgid")}
_KEY_FIELDS = {
    "Dot1Q": ("vlan",), "RDETH": ("eecnxt",), "DETH": ("qkey", "srcqp"), "XRCETH": ("xrcsrq",),
    "RETH": ("va", "rkey", "dmalen"), "AtomicETH": ("va", "rkey", "swap_add", "compare"),
    "AtomicAckETH": ("orig",), "ImmDt": ("imm",), "IETH": ("rkey",),
    "MAD": ("method", "tid"),
    "REQ": ("local_comm_id", "local_qpn", "starting_psn"),
    "REP": ("local_comm_id", "remote_comm_id", "local_qpn", "starting_psn"),
    "REJ": ("local_comm_id", "remote_comm_id", "reason"),
    "MRA": ("local_comm_id", "remote_comm_id"), "RTU": ("local_comm_id", "remote_comm_id"),
    "DREQ": ("local_comm_id", "remote_comm_id"), "DREP": ("local_comm_id", "remote_comm_id"),
    "SIDR_REQ": ("request_id",), "SIDR_REP": ("request_id", "sidr_status"),
    "LAP": ("local_comm_id", "remote_comm_id"), "APR": ("local_comm_id", "ap_status"),
}


def _layer_summary(layer: "Layer") -> str:
    cls = type(layer).__name__
    v = layer.fields()
    if cls in _ROUTES:
        a, b = _ROUTES[cls]
        return f"{cls} {_plain(layer, a, v[a])} > {_plain(layer, b, v[b])}"
    if cls == "BTH":
        names = type(layer)._names.get("opcode", {})
        op = names.get(v["opcode"]) or value_text(layer, "opcode", v["opcode"])
        return (f"BTH {op} dqpn={value_text(layer, 'dqpn', v['dqpn'])} "
                f"psn={value_text(layer, 'psn', v['psn'])}")
    if cls == "AETH":
        names = type(layer)._names.get("syndrome", {})
        syn = names.get(v["syndrome"]) or value_text(layer, "syndrome", v["syndrome"])
        return f"AETH {syn} msn={value_text(layer, 'msn', v['msn'])}"
    if cls == "MAD":
        attr = type(layer)._names.get("attr_id", {}).get(v["attr_id"])
        return f"MAD {attr or value_text(layer, 'attr_id', v['attr_id'])} " + " ".join(
            f"{k}={_plain(layer, k, v[k])}" for k in _KEY_FIELDS["MAD"])
    if cls in ("Raw", "Undecoded"):
        return f"{cls} {len(v['load'] or b'')} bytes"
    keys = [k for k in _KEY_FIELDS.get(cls, ()) if v.get(k) is not None]
    return " ".join([cls] + [f"{k}={_plain(layer, k, v[k])}" for k in keys])


def _plain(layer: "Layer", name: str, value: Any) -> str:
    """A value for the summary line: its name when the table has one, else in its base."""
    label = type(layer)._names.get(name, {}).get(value) if isinstance(value, int) else None
    if label:
        return label
    return value if isinstance(value, str) else value_text(layer, name, value)


def summary_text(packet: "Packet") -> str:
    """"Ether / IP 192.0.2.1 > 192.0.2.2 / UDP 49152 > 4791 / BTH RC_ACKNOWLEDGE dqpn=0x12
    psn=0x5 / AETH ACK msn=3 / ICRC ok", with the decoder's finding codes in brackets."""
    text = " / ".join(_layer_summary(layer) for layer in packet.layers)
    ok = packet.icrc_ok
    if ok is not None:
        text += " / ICRC " + ("ok" if ok else "bad")
    codes: List[str] = []
    for f in packet.findings:
        if f.code not in codes:
            codes.append(f.code)
    return text + (f" [{', '.join(codes)}]" if codes else "")


def hexdump_text(data: bytes) -> str:
    """Scapy's hexdump layout: offset, 16 bytes in hex, the printable ones as text."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at:at + 16]
        hexes = " ".join(f"{b:02X}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:04x}  {hexes:<47}  {text}")
    return "\n".join(lines)
