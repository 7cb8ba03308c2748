"""roceconf: RoCE packets, ports, targets and conformance cases from Python.

    >>> import roceconf
    >>> from roceconf import Ether, IP, UDP, BTH, AETH
    >>> pkt = Ether() / IP() / UDP() / BTH(opcode=0x11, psn=5) / AETH(msn=3)
    >>> roceconf.parse(bytes(pkt))[BTH].psn
    5

Packets: a class per header (Ether, Dot1Q, IP, IPv6, UDP, LRH, GRH, BTH, RDETH, DETH, XRCETH,
RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, FETH, MAD, Raw) and per CM message (REQ, MRA,
REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR, ClassPortInfo), with Scapy's field
names; parse() and read_pcap() decode through the C++ dissector (read_pcap(..., analyze=True) adds
the stream analysis). Symbolic values from the codec's tables: Opcode, Syndrome, NakCode,
CmMessage, RejReason (or their names as strings, wherever a number goes).
Targets and ports: Target.reference(quirks=[...]), Target.daemon(...), Target.raw(...),
memory_pair(), raw_socket_port(...), ControlClient(path).
Cases: @roceconf.case(...) functions taking a Context; run_case(), `roceconf run --cases`, and
the pytest plugin (roceconf.pytest_plugin), which also grades the catalogue on many devices
(roceconf.fleet).
"""

from . import _roceconf
from .errors import (CaptureError, CaseError, CaseStopped, DecodeError, EncodeError, Error,
                     LayerError, TargetError, TransportError)
from .packet import LAYERS, Finding, Layer, Packet, parse, read_pcap
from .constants import CmMessage, NakCode, Opcode, RejReason, Syndrome
from .context import Context
from .case import CaseInfo, case, load_cases, registered_cases
from .runner import CaseResult, run_case

__version__ = _roceconf.__version__

Target = _roceconf.Target
Port = _roceconf.Port
Connection = _roceconf.Connection
ControlClient = _roceconf.ControlClient
memory_pair = _roceconf.memory_pair
raw_socket_port = _roceconf.raw_socket_port

globals().update(LAYERS)  # Ether, IP, UDP, BTH, AETH, REQ, ...

__all__ = [
    "Error", "DecodeError", "EncodeError", "LayerError", "CaptureError", "TransportError",
    "TargetError", "CaseError", "CaseStopped",
    "Layer", "Packet", "Finding", "parse", "read_pcap", "LAYERS",
    "Opcode", "Syndrome", "NakCode", "CmMessage", "RejReason",
    "Target", "Port", "Connection", "ControlClient", "memory_pair", "raw_socket_port",
    "Context", "CaseInfo", "case", "load_cases", "registered_cases", "CaseResult", "run_case",
] + list(LAYERS)
