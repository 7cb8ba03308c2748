"""Packets with the feel of Scapy: a class per header with keyword defaults and Scapy's field
names, stacking with `/`, `bytes(pkt)`, and `parse(b)` whose layers read as `pkt[BTH].psn`.

Every byte goes through the C++ codec: the classes below are made from its layer table.
Computed fields (lengths, checksums, pad count, ICRC, Ethernet type, RETH DMA length) default to
None and fill themselves in; give a value to keep it, even a wrong one. A parsed packet keeps
every field as read, and, as long as none is changed, its bytes as they came (as Scapy's raw
packet cache does): `bytes(parse(b, strict=False)) == b` for any input. What could not be decoded
(a header cut short, and everything after it) is an `Undecoded` layer holding those bytes as
they are. Delete a field (`del pkt[BTH].icrc`) to have it computed again after an edit.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Type, Union

from . import _roceconf as _core
from . import display
from .errors import DecodeError, EncodeError, LayerError

__all__ = ["Layer", "Packet", "Finding", "parse", "read_pcap", "LAYERS"]


class Finding(NamedTuple):
    """Something the decoder noticed: a stable code, the layer and frame offset, a message."""

    code: str
    layer: str
    offset: int
    message: str
    severity: str  # "note", "warning" or "error"


class Layer:
    """One header. Subclasses (BTH, AETH, REQ, ...) come from the codec's layer table."""

    __slots__ = ("_values",)
    _fields: Tuple[str, ...] = ()
    _defaults: Dict[str, Any] = {}
    _computed: frozenset = frozenset()
    _readonly: frozenset = frozenset()  # derived (opcode_name, icrc_ok): as decoded
    _aliases: Dict[str, Tuple[str, ...]] = {}  # older names viewing fields (IP.tos)
    _hex: frozenset = frozenset()  # shown in hexadecimal (the field table says which)
    _types: Dict[str, str] = {}  # "unsigned", "bool", "name", "bytes", "mac", "ipv4", "ipv6"
    _names: Dict[str, Dict[int, str]] = {}  # the table's value names (opcodes, syndromes, ...)
    _positional: Tuple[str, ...] = ()  # fields given by position: Raw(b"...")

    def __init__(self, *args: Any, **fields: Any) -> None:
        if len(args) > len(self._positional):
            cls = type(self).__name__
            raise TypeError(f"{cls}() takes its fields by keyword ({cls}(field=value, ...))"
                            if not self._positional else
                            f"{cls}() takes {len(self._positional)} positional argument "
                            f"({', '.join(self._positional)}), {len(args)} given")
        for name, value in zip(self._positional, args):
            if name in fields:
                raise TypeError(f"{type(self).__name__}() got '{name}' twice")
            fields[name] = value
        values: Dict[str, Any] = {}
        for name, value in fields.items():
            if name in self._aliases:
                values.update(_core.layer_alias_set(type(self).__name__, name, value))
                continue
            if name not in self._defaults:
                raise EncodeError(
                    f"{type(self).__name__} has no field '{name}' "
                    f"(fields: {', '.join(self._fields)})")
            if name in self._readonly:
                raise EncodeError(f"{type(self).__name__}.{name} is derived from the other "
                                  "fields and cannot be given")
            values[name] = self._value(name, value)
        object.__setattr__(self, "_values", values)

    @classmethod
    def _value(cls, name: str, value: Any) -> Any:
        """A number given by its name becomes the number (checked now, not in bytes())."""
        if isinstance(value, str) and cls._types.get(name) in ("unsigned", "bool"):
            if name in cls._names:
                return _core.named_value(cls.__name__, name, value)
            raise EncodeError(f"{cls.__name__}.{name}: expected an integer, got '{value}'")
        return value

    @classmethod
    def _from_values(cls, values: Dict[str, Any]) -> "Layer":
        layer = object.__new__(cls)
        object.__setattr__(layer, "_values", values)
        return layer

    def __getattr__(self, name: str) -> Any:
        defaults = type(self)._defaults
        if name in defaults:
            return self._values.get(name, defaults[name])
        raise AttributeError(f"{type(self).__name__} has no field '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._aliases:
            self._values.update(_core.layer_alias_set(type(self).__name__, name, value))
            return
        if name not in self._defaults:
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        if name in self._readonly:
            raise AttributeError(f"{type(self).__name__}.{name} is derived from the other "
                                 "fields and cannot be set")
        self._values[name] = self._value(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._aliases:
            for field in self._aliases[name]:
                self._values.pop(field, None)
            return
        if name not in self._defaults:
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        self._values.pop(name, None)

    def fields(self) -> Dict[str, Any]:
        """Every field: the given values, the defaults for the rest (None: computed)."""
        return {n: self._values.get(n, self._defaults[n]) for n in self._fields}

    def copy(self) -> "Layer":
        return type(self)._from_values(dict(self._values))

    def __truediv__(self, other: Any) -> "Packet":
        return Packet([self]) / other

    def __rtruediv__(self, other: Any) -> "Packet":
        return _as_packet(other) / self

    def __bytes__(self) -> bytes:
        return bytes(Packet([self]))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.fields() == other.fields()  # type: ignore

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        given = " ".join(f"{k}={display.value_text(self, k, v)}" for k, v in self._values.items()
                         if v is not None)
        return f"<{type(self).__name__} {given} |>" if given else f"<{type(self).__name__} |>"


def _field_property(name: str, default: Any) -> property:
    # A descriptor per field: reading pkt[BTH].psn is one dict lookup, no __getattr__ fallback.
    def get(self: Layer) -> Any:
        return self._values.get(name, default)

    def put(self: Layer, value: Any) -> None:
        self._values[name] = self._value(name, value)

    def drop(self: Layer) -> None:
        self._values.pop(name, None)

    return property(get, put, drop)


def _alias_property(cls: str, name: str, fields: Tuple[str, ...]) -> property:
    # Read through the fields it views (IP.tos from dscp and ecn); Layer.__setattr__ writes.
    def get(self: Layer) -> Any:
        return _core.layer_alias_get(cls, name, {f: getattr(self, f) for f in fields})

    return property(get)


# The classes' fields are the codec's field table (_core.field_table()): `BTH.solicited` is
# bth.solicited, `roceconf.bth.solicited` in Wireshark.
LAYERS: Dict[str, Type[Layer]] = {}
_a = _over = None
for _name, _doc, _table, _alias_table in _core.layer_table():
    _attrs: Dict[str, Any] = {
        "__slots__": (),
        "__doc__": _doc + "\n\nFields: " + ", ".join(f[0] for f in _table) + ".",
        "_fields": tuple(f[0] for f in _table),
        "_defaults": {f[0]: f[1] for f in _table},
        "_computed": frozenset(f[0] for f in _table if f[2]),
        "_readonly": frozenset(f[0] for f in _table if f[3]),
        "_aliases": {a: tuple(over) for a, over in _alias_table},
        "_hex": frozenset(f[0] for f in _table if f[4]),
        "_types": {f[0]: f[5] for f in _table},
        "_names": {f[0]: dict(f[6]) for f in _table if f[6]},
    }
    if _name == "Raw":
        _attrs["_positional"] = ("load",)
    for _f in _table:
        _attrs[_f[0]] = _field_property(_f[0], _f[1])
    for _a, _over in _alias_table:
        _attrs[_a] = _alias_property(_name, _a, tuple(_over))
    LAYERS[_name] = type(_name, (Layer,), _attrs)
del _name, _doc, _table, _alias_table, _attrs, _f, _a, _over

class Undecoded(Layer):
    """The bytes of a frame from the first header cut short to its end, kept as they came
    (never decoded into a zero-filled header). offset: where they start in the frame; when the
    layers before are edited, the frame is re-encoded up to offset and these bytes follow.

    Fields: offset, load."""

    __slots__ = ()
    _fields = ("offset", "load")
    _defaults = {"offset": None, "load": b""}
    _computed = frozenset()
    _types = {"offset": "unsigned", "load": "bytes"}
    offset = _field_property("offset", None)
    load = _field_property("load", b"")


LAYERS["Undecoded"] = Undecoded

# Findings that mean the bytes are not a well-framed packet: a header cut short, or a length or
# version that leaves the layers undefined. parse() raises for these by default; values that are
# merely wrong or reserved (a reserved AETH syndrome, a bad ICRC) only become findings.
_FRAMING = frozenset({
    "truncated", "ip-version", "ip-length", "udp-length", "grh-length", "grh-version",
    "lrh-length", "lrh-version", "mad-length", "link-header",
})

_CM = ("REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR",
       "ClassPortInfo")
# BTH opcode for the header that follows it, when the opcode is not given (as Scapy's
# bind_layers does for AETH): RC unless a datagram header says otherwise.
_OPCODE_FOR_NEXT = {
    "AETH": 0x11, "AtomicAckETH": 0x12, "AtomicETH": 0x14, "ImmDt": 0x05, "IETH": 0x17,
    "DETH": 0x64, "XRCETH": 0xA4, "FETH": 0x1C,
}


def _as_packet(x: Any) -> "Packet":
    if isinstance(x, Packet):
        return x
    if isinstance(x, Layer):
        return Packet([x])
    if isinstance(x, (bytes, bytearray, memoryview)):
        return Packet([LAYERS["Raw"](load=bytes(x))])
    if isinstance(x, str):
        return Packet([LAYERS["Raw"](load=x.encode())])
    raise EncodeError(f"cannot stack a {type(x).__name__} on a packet")


class Packet:
    """A stack of layers. Built with `/`, or parsed from bytes (parse(), read_pcap())."""

    __slots__ = ("_layers", "_frame", "_cache")

    def __init__(self, layers: Optional[List[Layer]] = None) -> None:
        self._layers: Optional[List[Layer]] = list(layers or [])
        self._frame = None
        self._cache: Optional[Dict[Tuple[str, int], Layer]] = None

    @classmethod
    def _from_frame(cls, frame: Any) -> "Packet":
        p = object.__new__(cls)
        p._layers = None
        p._frame = frame
        p._cache = {}
        return p

    @classmethod
    def from_bytes(cls, data: bytes, **options: Any) -> "Packet":
        """parse(data, strict=False, ...)."""
        options.setdefault("strict", False)
        return parse(data, **options)

    # ---- layers ----
    @property
    def layers(self) -> List[Layer]:
        """The layers in wire order (a parsed packet reads them all on first use)."""
        if self._layers is None:
            seen: Dict[str, int] = {}
            out = []
            for name in self._frame_names():
                i = seen.get(name, 0)
                seen[name] = i + 1
                layer = self._cache.get((name, i))
                if layer is None:
                    layer = LAYERS[name]._from_values(self._frame_fields(name, i))
                out.append(layer)
            self._layers = out
        return self._layers

    def _frame_names(self) -> List[str]:
        names = list(self._frame.layers)
        if self._frame.undecoded is not None:
            names.append("Undecoded")
        return names

    def _frame_fields(self, name: str, nth: int) -> Optional[Dict[str, Any]]:
        """The fields of a layer as decoded, or None when the frame does not have it."""
        if name == "Undecoded":
            u = self._frame.undecoded
            return None if u is None or nth != 0 else {"offset": u[0], "load": u[1]}
        return self._frame.fields(name, nth) if name in LAYERS else None

    def _unmodified(self) -> bool:
        """Whether every layer is still as decoded (then the frame's own bytes are its bytes)."""
        if self._layers is None:
            items = list(self._cache.items())
        else:
            seen: Dict[str, int] = {}
            items = []
            for layer in self._layers:
                name = type(layer).__name__
                i = seen.get(name, 0)
                seen[name] = i + 1
                items.append(((name, i), layer))
            if [k[0] for k, _ in items] != self._frame_names():
                return False
        return all(layer._values == self._frame_fields(name, i) for (name, i), layer in items)

    def _find(self, cls: Union[str, Type[Layer]], nth: int = 0) -> Optional[Layer]:
        name = cls if isinstance(cls, str) else cls.__name__
        if self._layers is None:
            key = (name, nth)
            layer = self._cache.get(key)
            if layer is None:
                values = self._frame_fields(name, nth)
                if values is None:
                    return None
                layer = LAYERS[name]._from_values(values)
                self._cache[key] = layer
            return layer
        for layer in self._layers:
            if type(layer).__name__ == name:
                if nth == 0:
                    return layer
                nth -= 1
        return None

    def __getitem__(self, cls: Union[str, Type[Layer]]) -> Layer:
        layer = self._find(cls)
        if layer is None:
            name = cls if isinstance(cls, str) else cls.__name__
            raise LayerError(f"Layer [{name}] not present")
        return layer

    def __contains__(self, cls: Union[str, Type[Layer]]) -> bool:
        return self._find(cls) is not None

    def haslayer(self, cls: Union[str, Type[Layer]]) -> bool:
        return self._find(cls) is not None

    def getlayer(self, cls: Union[str, Type[Layer]], nb: int = 1) -> Optional[Layer]:
        return self._find(cls, nb - 1)

    def __truediv__(self, other: Any) -> "Packet":
        return Packet([l.copy() for l in self.layers] + [l.copy() for l in _as_packet(other).layers])

    def __rtruediv__(self, other: Any) -> "Packet":
        return _as_packet(other) / self

    def __iter__(self) -> Iterator[Layer]:
        return iter(self.layers)

    def __len__(self) -> int:
        return len(bytes(self))

    # ---- bytes ----
    def _stack(self) -> List[Tuple[str, Dict[str, Any]]]:
        layers = self.layers
        names = [type(l).__name__ for l in layers]
        stack = [(n, dict(l._values)) for n, l in zip(names, layers)]
        if self._frame is not None:
            return stack
        # Built packets: what Scapy's bind_layers would set, unless given.
        has_mad = any(n == "MAD" or n in _CM for n in names)
        if has_mad and "DETH" not in names and "BTH" in names:
            at = names.index("BTH") + 1
            stack.insert(at, ("DETH", {"qkey": 0x80010000, "srcqp": 1}))
            names.insert(at, "DETH")
        if "BTH" in names:
            i = names.index("BTH")
            bth = stack[i][1]
            if bth.get("opcode") is None:
                after = names[i + 1] if i + 1 < len(names) else None
                if after == "RETH":
                    bth["opcode"] = 0x0A if "Raw" in names else 0x0C
                elif after in _OPCODE_FOR_NEXT:
                    bth["opcode"] = _OPCODE_FOR_NEXT[after]
            if has_mad and bth.get("dqpn") is None:
                bth["dqpn"] = 1
        return stack

    def __bytes__(self) -> bytes:
        if self._frame is not None and self._unmodified():
            return self._frame.data
        return self._encode()

    def _encode(self) -> bytes:
        """The bytes built from the layers (what bytes() gives once a field is changed)."""
        stack = self._stack()
        names = [n for n, _ in stack]
        if "Undecoded" not in names:
            return _core.encode(stack)
        at = names.index("Undecoded")
        rest = stack[at][1]
        prefix = _core.encode(stack[:at]) if at > 0 else b""
        offset = rest.get("offset")
        if offset is not None:
            prefix = prefix[:offset]
        return prefix + bytes(rest.get("load") or b"")

    def build(self) -> bytes:
        return bytes(self)

    # ---- what the decoder found ----
    def _decoded(self) -> Any:
        """The frame of these bytes: as read while unchanged, else the bytes built now."""
        if self._frame is not None and self._unmodified():
            return self._frame
        return _core.decode(bytes(self), self.link)

    @property
    def findings(self) -> List[Finding]:
        """What the decoder finds in the packet's bytes (as they are now)."""
        return [Finding(*f) for f in self._decoded().findings]

    @property
    def icrc_ok(self) -> Optional[bool]:
        """Whether the ICRC carried is the one computed; None without an ICRC."""
        icrc = self._decoded().icrc
        return None if icrc is None else icrc[0] == icrc[1]

    @property
    def time_ns(self) -> int:
        """Capture time (read_pcap) since the Unix epoch, else 0."""
        return self._frame.time_ns if self._frame is not None else 0

    @property
    def analysis(self) -> Optional[Dict[str, Any]]:
        """read_pcap(..., analyze=True): the stream analysis of this frame, as `roceconf decode
        --json` has it under "analysis" (channel, role, psn, ack_frame, cm_connection, flags,
        ...), with the judgements later frames make (acked-by, nak-received) added as they
        come; None when not analysed or when the analysis has nothing to say."""
        return self._frame.analysis if self._frame is not None else None

    @property
    def link(self) -> int:
        """The link type: the capture's, or that of the first layer (Ether 1, IP 101, LRH 247)."""
        if self._frame is not None:
            return self._frame.link
        first = type(self.layers[0]).__name__ if self.layers else "Ether"
        return {"IP": 101, "IPv6": 101, "LRH": 247}.get(first, 1)

    def copy(self) -> "Packet":
        """A deep copy: edits to it leave this packet as it is (and a parsed packet's copy keeps
        its bytes until a field changes)."""
        p = object.__new__(Packet)
        p._frame = self._frame
        p._layers = None if self._layers is None else [l.copy() for l in self._layers]
        p._cache = None if self._cache is None else {k: l.copy() for k, l in self._cache.items()}
        return p

    def summary(self) -> str:
        """One line: each layer's key fields, in the same bases as repr and show()."""
        return display.summary_text(self)

    def show(self, dump: bool = False) -> Optional[str]:
        """Every field of every layer (numbers in their table base, value names beside them),
        the decoder's findings and the analysis flags; printed, or returned with dump=True."""
        text = display.show_text(self)
        if dump:
            return text
        print(text)
        return None

    def show2(self, dump: bool = False) -> Optional[str]:
        """show() of the packet as built: its bytes decoded again, computed fields filled in."""
        return parse(bytes(self), link=self.link, strict=False).show(dump)

    def hexdump(self, dump: bool = False) -> Optional[str]:
        """The bytes as Scapy's hexdump() lays them out; printed, or returned with dump=True."""
        text = display.hexdump_text(bytes(self))
        if dump:
            return text
        print(text)
        return None

    def __repr__(self) -> str:
        return " / ".join(repr(l) for l in self.layers)


def parse(data: Union[bytes, bytearray, memoryview], *, link: int = 1, udp_port: int = 4791,
          check_icrc: bool = True, strict: Optional[bool] = None) -> Packet:
    """Decodes one frame (link: 1 Ethernet, 101 raw IP, 247 InfiniBand, ...).

    By default (strict=None) only bytes that are not a well-framed packet raise DecodeError
    (a header cut short, an IP/UDP/GRH/LRH length or version that leaves the layers undefined);
    a well-framed packet with wrong or reserved values (a reserved AETH syndrome, a bad ICRC)
    comes back with those findings on it. strict=True raises for any error finding;
    strict=False never raises. DecodeError carries the packet and its findings. Whatever comes
    back, bytes(packet) is the input until a field is changed."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"parse() takes bytes, not {type(data).__name__}")
    frame = _core.decode(bytes(data), link, udp_port, check_icrc)
    packet = Packet._from_frame(frame)
    if strict is not False:
        errors = [Finding(*f) for f in frame.findings
                  if f[4] == "error" and (strict or f[0] in _FRAMING)]
        if errors:
            first = errors[0]
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            raise DecodeError(f"{first.code} in {first.layer} at byte {first.offset}: "
                              f"{first.message}{more}", packet, packet.findings)
    return packet


def read_pcap(path: str, *, udp_port: int = 4791, check_icrc: bool = True,
              analyze: bool = False) -> Iterator[Packet]:
    """The frames of a pcap or pcapng file, decoded (never strict: see each packet's findings).
    With analyze=True each packet also carries the stream analysis (`packet.analysis`) the
    Wireshark plugin shows: PSN state, retransmissions, what an ACK answers, CM state, flags."""
    for frame in _core.CaptureIterator(str(path), udp_port, check_icrc, analyze):
        yield Packet._from_frame(frame)
