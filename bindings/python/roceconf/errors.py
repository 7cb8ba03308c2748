"""roceconf's exceptions: one base, a subclass for each kind of failure.

Error
  DecodeError      bytes that are not a valid frame (carries .packet and .findings)
  EncodeError      a field value or layer stack that cannot be encoded
  LayerError       a layer the packet does not have (also an IndexError, as in Scapy)
  CaptureError     a capture file that cannot be read
  TransportError   a port or control socket failed
  TargetError      a target could not be created, reset or reached
  CaseError        a case is wrong (bad step, unknown connection, nothing registered)
    CaseStopped    a step ended the case with a verdict (fail, skip, error, inconclusive)
"""

from __future__ import annotations

import os
import traceback
from typing import Any, List, Optional, Tuple

__all__ = [
    "Error", "DecodeError", "EncodeError", "LayerError", "CaptureError", "TransportError",
    "TargetError", "CaseError", "CaseStopped", "verdict_of",
]


class Error(Exception):
    """Base of every exception roceconf raises."""


class DecodeError(Error, ValueError):
    """The bytes are not a valid frame. `packet` holds what could be read, `findings` why."""

    def __init__(self, message: str, packet: Any = None, findings: Optional[list] = None):
        super().__init__(message)
        self.packet = packet
        self.findings = findings or []


class EncodeError(Error, ValueError):
    """A field value or a layer stack the codec cannot encode."""


class LayerError(Error, IndexError):
    """The packet has no such layer."""


class CaptureError(Error, OSError):
    """A capture file is missing, unreadable or corrupt."""


class TransportError(Error, OSError):
    """A port or control socket failed."""


class TargetError(Error):
    """A target could not be created, reset or reached."""


class CaseError(Error):
    """The case itself is wrong: a step that does not parse, an unknown connection, ..."""


class CaseStopped(CaseError):
    """A step ended the case: `verdict` ("fail", "skip", "error", "inconclusive"), `reason`,
    and `diffs` [(field, expected, actual)]. Let it propagate: the runner records it."""

    def __init__(self, verdict: str, reason: str, diffs: Optional[list] = None):
        super().__init__(f"{verdict}: {reason}")
        self.verdict = verdict
        self.reason = reason
        self.diffs = [tuple(d) for d in (diffs or [])]


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_frame(tb) -> Optional[traceback.FrameSummary]:
    """The innermost traceback entry outside this package: the case's own line."""
    found = None
    for entry in traceback.extract_tb(tb):
        if not os.path.abspath(entry.filename).startswith(_PACKAGE_DIR + os.sep):
            found = entry
    return found


def verdict_of(exc: BaseException, tb: Any = None) -> Tuple[str, str, List[tuple], Optional[str]]:
    """(verdict, reason, diffs, step) for an exception that ended a Python case; `tb` is its
    traceback when the exception does not carry it."""
    if isinstance(exc, CaseStopped):
        return exc.verdict, exc.reason, list(exc.diffs), None
    where = _user_frame(tb if tb is not None else exc.__traceback__)
    step = None
    if where is not None:
        step = f"{os.path.basename(where.filename)}:{where.lineno} {(where.line or '').strip()}"
    if isinstance(exc, AssertionError):
        text = str(exc) or (where.line.strip() if where is not None and where.line else "assert")
        return "fail", f"assertion failed: {text}", [], step
    name = type(exc).__name__
    location = f" ({os.path.basename(where.filename)}:{where.lineno})" if where is not None else ""
    return "error", f"{name}: {exc}{location}", [], step
