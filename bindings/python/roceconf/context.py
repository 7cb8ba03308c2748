"""The running case as a Python case sees it: the same steps as the case language and the C++
cases (connect, send, expect, expect_nothing, control, ...), with keyword fields.

Fields are the case language's: `psn=1` counts from the connection's starting PSN, `msn="+1"`
is one after the last MSN seen, `syndrome="psn_seq_err"`, value names as the codec's table has
them or as identifiers (`reason="NO_QP_AVAILABLE"`), or the IntEnums of roceconf.constants; a
dotted name is written with `__` (`ip__csum="bad"`) or passed in `fields={"ip.csum": "bad"}`.
Windows are duration strings
("4rtt", "10ms") or seconds; the defaults are the run's calibrated windows. A step that fails
raises CaseStopped: let it propagate and the case gets that verdict.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Union

from . import _roceconf as _core
from .packet import Packet, parse

__all__ = ["Context"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
ConnRef = Union[str, "_core.Connection", None]


def _where() -> str:
    """file.py:LINE of the case line that called into this module."""
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR + os.sep):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def _text(fields: Dict[str, Any]) -> str:
    def show(v: Any) -> str:
        if isinstance(v, bool):
            return "1" if v else "0"
        if isinstance(v, bytes):
            return v.hex()
        return str(v)
    return " ".join(f"{k.replace('__', '.')}={show(v)}" for k, v in fields.items() if v is not None)


def _name(conn: ConnRef) -> Optional[str]:
    if conn is None or isinstance(conn, str):
        return conn
    return conn.name


class Context:
    """What a @roceconf.case function receives."""

    def __init__(self, handle: Any) -> None:
        self._h = handle

    def _step(self, text: str) -> None:
        self._h.set_step(f"{_where()} {text}".rstrip())

    @staticmethod
    def _merge(fields: Optional[Dict[str, Any]], kw: Dict[str, Any]) -> Dict[str, Any]:
        merged = dict(fields or {})
        merged.update(kw)
        for k, v in merged.items():  # value names as identifiers too: reason="NO_QP_AVAILABLE"
            if isinstance(v, str):
                named = _core.step_value(k.replace("__", "."), v)
                if named is not None:
                    merged[k] = named
        return merged

    # ---- connections ----
    def connect(self, name: str = "c", *, fields: Optional[Dict[str, Any]] = None,
                **kw: Any) -> "_core.Connection":
        """rdma_cm REQ/REP/RTU to the target's responder. Keys: pmtu, pkey, target_psn, rtu=0,
        any REQ field."""
        f = self._merge(fields, kw)
        self._step(f"connect {name} {_text(f)}")
        self._h.new_connection(name)
        self._h.connect(name, f)
        return self._h.connection(name)

    def open(self, name: str = "c", *, fields: Optional[Dict[str, Any]] = None,
             **kw: Any) -> "_core.Connection":
        """(control) a target QP made through the control API, connected without CM. Keys: pmtu,
        psn, target_psn, pkey_index, recv, recv_len, cq, access, min_rnr_timer, ..."""
        f = self._merge(fields, kw)
        self._step(f"open {name} {_text(f)}")
        self._h.new_connection(name)
        self._h.open(name, f)
        return self._h.connection(name)

    def accept(self, name: str = "c", *, fields: Optional[Dict[str, Any]] = None,
               **kw: Any) -> "_core.Connection":
        """(control) the tester as the CM passive side of the target's own REQ."""
        f = self._merge(fields, kw)
        self._step(f"accept {name} {_text(f)}")
        self._h.new_connection(name)
        self._h.accept(name, f)
        return self._h.connection(name)

    def connection(self, name: str) -> "_core.Connection":
        return self._h.connection(name)

    def disconnect(self, conn: ConnRef) -> None:
        """DREQ, and the DREP must come."""
        self._step(f"disconnect {_name(conn)}")
        self._h.disconnect(_name(conn))

    def status(self, conn: ConnRef, *, window: Any = None, **kw: Any) -> None:
        """(control) cm_status of an accepted connection has these fields within the window."""
        self._step(f"status {_name(conn)} {_text(kw)}")
        self._h.expect_status(_name(conn), kw, window)

    # ---- packets ----
    def send(self, conn: ConnRef, op: Union[str, int], *,
             fields: Optional[Dict[str, Any]] = None, **kw: Any) -> Union[Packet, List[Packet]]:
        """One request (SEND_ONLY, RDMA_WRITE_ONLY, READ, FETCH_ADD, a number or
        roceconf.Opcode, ...) or a whole message (SEND, RDMA_WRITE, SEND_WITH_IMM,
        RDMA_WRITE_WITH_IMM with len=N), or a CM message (REQ, REP, RTU, DREQ, DREP, MRA, REJ,
        ClassPortInfo). Returns what went on the wire, decoded: the Packet of a request or CM
        message; for a whole message the list of its packets (one or more, by the path MTU)."""
        f = self._merge(fields, kw)
        op = str(int(op)) if isinstance(op, int) else op
        self._step(f"send {_name(conn)} {op} {_text(f)}")
        if op in ("REQ", "REP", "RTU", "DREQ", "DREP", "MRA", "REJ", "ClassPortInfo"):
            if not self._h.has_connection(_name(conn)):
                self._h.new_connection(_name(conn))
            return parse(self._h.cm_send(_name(conn), op, f), strict=False)
        frames, whole_message = self._h.send(_name(conn), op, f)
        packets = [parse(d, strict=False) for d in frames]
        return packets if whole_message else packets[0]

    def send_frame(self, frame: Union[bytes, Packet], text: Optional[str] = None) -> Packet:
        """A frame exactly as given (bytes, or a Packet built with `/`). Returns it, decoded."""
        data = bytes(frame)
        if text is None:
            text = frame.summary() if isinstance(frame, Packet) else f"{len(data)} bytes"
        self._step(f"send frame {text}")
        self._h.send_frame(data, text)
        return parse(data, strict=False)

    def expect(self, conn: ConnRef, kind: str = "any", *, window: Any = None,
               eventually: bool = False, fields: Optional[Dict[str, Any]] = None,
               **kw: Any) -> Packet:
        """The next packet for `conn` (any RoCE packet when None) is of `kind` (ACK, NAK, RNR,
        READ_RESPONSE, an opcode, REP, REJ, ...) with these fields. Returns it."""
        f = self._merge(fields, kw)
        tail = " eventually" if eventually else ""
        self._step(f"expect {_name(conn) or 'any'} {kind} {_text(f)}{tail}")
        data, _ = self._h.expect(_name(conn), kind, f, window, eventually)
        return parse(data, strict=False)

    def expect_nothing(self, conn: ConnRef = None, *, window: Any = None) -> None:
        """No packet for `conn` (none at all when None) within the window."""
        self._step(f"expect nothing{' from ' + _name(conn) if conn is not None else ''}")
        self._h.expect_nothing(_name(conn), window)

    def collect(self, conn: ConnRef = None, *, window: Any = None) -> List[Packet]:
        """The packets for `conn` that arrive within the window (never fails)."""
        self._step(f"collect {_name(conn) or ''}")
        return [parse(d, strict=False) for d, _ in self._h.collect(_name(conn), window)]

    def wait(self, duration: Any) -> None:
        """Time passes ("2rtt", "5ms", seconds); what arrives is kept for later expects."""
        self._step(f"wait {duration}")
        self._h.wait(duration)

    # ---- control ----
    def control(self, request: Optional[Dict[str, Any]] = None, *, ok: bool = False,
                **kw: Any) -> Dict[str, Any]:
        """(control) one control-API request: control(op="query_qp", qp=3). With ok=True, an
        answer ok=false ERRORs the case (a set-up step)."""
        req = self._merge(request, kw)
        self._step(f"control {req.get('op', '')}")
        return self._h.control(req, ok)

    def counters(self) -> Dict[str, int]:
        """(control) the target's counters by name."""
        return self._h.counters()

    def step(self, text: str) -> None:
        """Any step of the case language, as a script line: "post recv c count=4 len=64",
        "poll c status=SUCCESS opcode=RECV", "modify c qp_state=ERR expect=ok", "counter
        snapshot", ..."""
        where = _where()
        self._h.set_step(f"{where} {text}")
        self._h.step(text, where.split(":")[0])

    # ---- verdicts and notes ----
    def require(self, capability: str) -> None:
        """SKIPs the case unless the target has it: listener, responder, control, pkey-limited,
        mw-type1, mw-type2 (memory windows of that type), vlan."""
        self._h.require(capability)

    def fail(self, reason: str, diffs: Optional[list] = None) -> None:
        self._step("fail")
        self._h.fail(reason, [tuple(d) for d in (diffs or [])])

    def skip(self, reason: str) -> None:
        self._h.skip(reason)

    def inconclusive(self, reason: str) -> None:
        self._step("inconclusive")
        self._h.inconclusive(reason)

    def error(self, reason: str) -> None:
        self._step("error")
        self._h.error(reason)

    def note(self, text: str) -> None:
        """A line on the case's timeline."""
        self._h.note(text)

    # ---- the run ----
    def random(self) -> int:
        """A 64-bit number from the case's seeded stream (runs repeat exactly)."""
        return self._h.random()

    @property
    def rtt_ns(self) -> int:
        return self._h.rtt_ns()

    def window_ns(self, window: Any = None, *, silence: bool = False) -> int:
        return self._h.window_ns(window, silence)

    @property
    def now_ns(self) -> int:
        return self._h.now_ns()

    @property
    def target_kind(self) -> str:
        return self._h.target_kind()

    @property
    def capabilities(self) -> Dict[str, Any]:
        return self._h.capabilities()

    @property
    def addresses(self) -> Dict[str, Any]:
        return self._h.addresses()


