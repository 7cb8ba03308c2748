"""Devices of a fleet run and their reports (the pytest plugin's --roceconf-device,
--roceconf-profile and --roceconf-fleet).

A device is `NAME=KIND[:ARG]`:

    lab-a=reference                       the in-process reference NIC
    lab-b=reference:psn-gap-ack,dup-ack   ... with these quirks (defects)
    lab-c=daemon:psn-gap-ack              the reference daemon on a veth pair (root)
    cx6-r4=raw:cx6-r4.profile             a real device (suite/engine/PROFILE.md)

`--roceconf-profile FILE` is `STEM=raw:FILE`. NAME is the device's label in test ids, in the
xdist group that keeps its cases on one worker, in its reports (identity key `label`) and as
the fleet report's column title.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _roceconf as _core
from .cli import roceconf_binary
from .errors import Error

__all__ = ["Device", "parse_device", "profile_device", "DeviceState", "tester_host",
           "write_reports", "merge"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KINDS = ("reference", "daemon", "raw")


@dataclass
class Device:
    """One device under test: its label, the kind of target and the quirks or the profile."""

    name: str
    kind: str
    quirks: List[str] = field(default_factory=list)
    profile: str = ""
    clock: str = "virtual"  # a reference device: "real" runs it on the wall clock

    def spec(self) -> str:
        arg = self.profile if self.kind == "raw" else ",".join(self.quirks)
        return f"{self.name}={self.kind}" + (f":{arg}" if arg else "")

    def open(self) -> Any:
        """The device's target (roceconf.Target); TargetError when it cannot be set up."""
        if self.kind == "reference":
            return _core.Target.reference(self.quirks, real_time=self.clock == "real")
        if self.kind == "daemon":
            return _core.Target.daemon(self.quirks, roceconf_binary())
        return _core.Target.raw(self.profile)


def parse_device(spec: str) -> Device:
    """`NAME=KIND[:ARG]`; ValueError with what to write instead."""
    name, eq, rest = spec.partition("=")
    name = name.strip()
    if not eq or not _NAME.match(name):
        raise ValueError(f"{spec!r} is not NAME=KIND[:ARG] (NAME of letters, digits, '.', '_', "
                         f"'-'; e.g. lab-a=reference:psn-gap-ack)")
    kind, _, arg = rest.partition(":")
    kind = kind.strip()
    if kind not in KINDS:
        raise ValueError(f"{spec!r}: unknown kind {kind!r} (reference, daemon or raw)")
    if kind == "raw":
        if not arg:
            raise ValueError(f"{spec!r}: a raw device needs its profile (NAME=raw:FILE)")
        return Device(name, kind, profile=arg)
    quirks = [q.strip() for q in arg.split(",") if q.strip()]
    return Device(name, kind, quirks=quirks)


def profile_device(path: str) -> Device:
    """`--roceconf-profile FILE`: a raw device named after the file (cx6-r4.profile: cx6-r4)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    name = re.sub(r"[^A-Za-z0-9._-]", "-", stem).lstrip(".-_") or "device"
    return Device(name[:64], "raw", profile=path)


def tester_host() -> List[Tuple[str, str]]:
    """hostname, kernel, machine, os: the reports' tester host, as `roceconf run` has it."""
    out = [("hostname", platform.node()), ("kernel", platform.release()),
           ("machine", platform.machine())]
    try:
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "")
        if pretty:
            out.append(("os", pretty))
    except OSError:
        pass
    return out


def _sha256(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""


class DeviceState:
    """A device in this process: its target, opened at its first case, and its run. A target
    that cannot be set up leaves the device with `setup_error` and no case runs on it."""

    def __init__(self, device: Device, *, seed: int, command_line: Sequence[str],
                 local_cases: int = 0) -> None:
        self.device = device
        self.target: Optional[Any] = None
        error = ""
        try:
            self.target = device.open()
        except Error as e:  # TargetError: no route, agent down, no such interface, no root
            error = str(e)
        self.run = _core.DeviceRun(
            self.target, device.name, kind=device.kind, description=device.spec(),
            quirks=device.quirks, host=tester_host(), seed=seed, profile=device.profile,
            profile_sha256=_sha256(device.profile) if device.profile else "",
            command_line=shlex.join(command_line), local_cases=local_cases)
        if error:
            self.run.fail_setup(error)

    @property
    def setup_error(self) -> str:
        return self.run.setup_error

    def reports(self) -> Dict[str, str]:
        """The device's reports as text: json, html, junit."""
        return {"json": self.run.json(), "html": self.run.html(), "junit": self.run.junit()}

    def close(self) -> None:
        if self.target is not None:
            self.target.close()
            self.target = None


def write_reports(directory: str, reports: Dict[str, Dict[str, str]]) -> List[str]:
    """DIR/NAME.json, NAME.html and NAME.junit.xml of each device, written atomically; the
    JSON paths in the order given."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, texts in reports.items():
        base = os.path.join(directory, name)
        _core.write_file_atomic(base + ".json", texts["json"])
        _core.write_file_atomic(base + ".html", texts["html"])
        _core.write_file_atomic(base + ".junit.xml", texts["junit"])
        paths.append(base + ".json")
    return paths


def merge(reports: Sequence[str], html: str = "", json: str = "") -> Tuple[str, int]:
    """`roceconf fleet merge REPORTS --html HTML --json JSON`: (the summary, the exit status)."""
    return _core.fleet_merge(list(reports), html, json)
