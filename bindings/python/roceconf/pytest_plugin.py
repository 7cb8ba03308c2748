"""pytest plugin: conformance cases as tests, on one device or a fleet of them.

`pytest my_cases.py` runs every @roceconf.case function of the module as a test against a
target, failing on FAIL, ERROR and INCONCLUSIVE and skipping on SKIP. Naming devices also
collects the built-in catalogue (scripts and C++ cases), every case on every device:

    pytest --roceconf-device a=reference --roceconf-device b=reference:psn-gap-ack \\
           --roceconf-profile cx6.profile -n 3 --roceconf-fleet out/

With pytest-xdist (`-n N`, or `--tx` gateways) each device's cases go to one worker
(xdist_group per device, --dist loadgroup, the default here), so devices run in parallel and
cases on one device never overlap. --roceconf-fleet DIR writes each device's reports
(NAME.json, NAME.html, NAME.junit.xml) and the fleet report (fleet.html, fleet.json).

Loaded automatically when the package is installed or on PYTHONPATH (its pytest11 entry point),
or with `-p roceconf.pytest_plugin`. Any .py file with a @roceconf.case function is collected,
whatever its name and without an ini file (`pytest examples/`), beside pytest's own test files.
Options: --roceconf-device NAME=KIND[:ARG] and --roceconf-profile FILE (repeatable; see
roceconf.fleet), --roceconf-catalogue GLOB|none, --roceconf-fleet DIR, --roceconf-seed N, and
for a single unnamed device --roceconf-target reference|daemon|raw with --roceconf-quirk NAME;
a bad one is a usage error (exit 4). Fixture: `roceconf_target`, the first device's target.
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Any, Dict, List, Optional

import pytest

from . import _roceconf as _core
from .case import CaseInfo
from .cli import roceconf_binary
from .fleet import Device, DeviceState, merge, parse_device, profile_device, write_reports
from .runner import CaseResult, result_of


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("roceconf", "roceconf conformance cases")
    group.addoption("--roceconf-device", action="append", default=[], metavar="NAME=KIND[:ARG]",
                    help="a device under test (repeatable): NAME=reference[:QUIRK,...], "
                         "NAME=daemon[:QUIRK,...] or NAME=raw:PROFILE")
    group.addoption("--roceconf-profile", action="append", default=[], metavar="FILE",
                    help="a real device described by a profile, named after the file "
                         "(repeatable)")
    group.addoption("--roceconf-catalogue", action="append", default=[], metavar="GLOB",
                    help="catalogue cases to collect, by id or area glob (repeatable; default "
                         "all when devices are named, none otherwise; 'none' for none)")
    group.addoption("--roceconf-fleet", default="", metavar="DIR",
                    help="write each device's reports and the fleet report (fleet.html, "
                         "fleet.json) here")
    group.addoption("--roceconf-target", default=None, choices=("reference", "daemon", "raw"),
                    help="the single device's target when none is named (default: the "
                         "in-process reference)")
    group.addoption("--roceconf-quirk", action="append", default=[],
                    help="a defect of the single reference target (repeatable)")
    group.addoption("--roceconf-seed", type=int, default=1, help="seed of the run (default 1)")
    group.addoption("--roceconf-clock", default="virtual", choices=("virtual", "real"),
                    help="reference devices: virtual (default; a catalogue in well under a "
                         "second) or real (the wall clock: windows and timeouts take their real "
                         "time, as on a wire)")


def _devices(config: Any) -> List[Device]:
    """The devices of this session, in command-line order; one unnamed device without any."""
    devices = [parse_device(spec) for spec in config.getoption("--roceconf-device")]
    devices += [profile_device(p) for p in config.getoption("--roceconf-profile")]
    if not devices:
        kind = config.getoption("--roceconf-target") or "reference"
        devices = [Device(kind, kind, quirks=list(config.getoption("--roceconf-quirk")))]
    for d in devices:
        if d.kind == "reference":
            d.clock = config.getoption("--roceconf-clock")
    return devices


def _named(config: Any) -> bool:
    return bool(config.getoption("--roceconf-device") or config.getoption("--roceconf-profile"))


def _catalogue_globs(config: Any) -> List[str]:
    globs = config.getoption("--roceconf-catalogue")
    if "none" in globs:
        return []
    return globs or (["*"] if _named(config) else [])


class _Session:
    """This process's devices (opened at their first case) and the reports gathered from
    xdist workers."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.devices = {d.name: d for d in _devices(config)}
        self.states: Dict[str, DeviceState] = {}
        self.from_workers: Dict[str, Dict[str, str]] = {}
        self.summary = ""
        self.local_cases = 0

    def state(self, name: str) -> DeviceState:
        if name not in self.states:
            self.states[name] = DeviceState(
                self.devices[name], seed=self.config.getoption("--roceconf-seed"),
                command_line=["pytest", *self.config.invocation_params.args],
                local_cases=self.local_cases)
        return self.states[name]

    def close(self) -> None:
        for s in self.states.values():
            s.close()
        self.states.clear()


_SESSION: Optional[_Session] = None


def _session(config: Any) -> _Session:
    global _SESSION
    if _SESSION is None:
        _SESSION = _Session(config)
    return _SESSION


@pytest.fixture(scope="session")
def roceconf_target(pytestconfig: Any) -> Any:
    """The first device's target (the only one without --roceconf-device)."""
    s = _session(pytestconfig)
    state = s.state(next(iter(s.devices)))
    if state.target is None:
        pytest.fail(f"device {state.device.name} failed its set-up: {state.setup_error}",
                    pytrace=False)
    return state.target


class CaseFailed(Exception):
    pass


class _DeviceCase(pytest.Item):
    """A case on one device. The device is set up at its first case; when that fails, each of
    its cases errors with the reason and the other devices go on."""

    device: str

    def _init(self, device: str) -> None:
        self.device = device
        self.add_marker(pytest.mark.roceconf)
        self.add_marker(pytest.mark.xdist_group(device))
        self.user_properties.append(("device", device))

    def setup(self) -> None:
        state = _session(self.config).state(self.device)
        if state.setup_error:
            pytest.fail(f"device {self.device} failed its set-up: {state.setup_error}",
                        pytrace=False)

    def _run(self, state: DeviceState) -> Dict[str, Any]:
        raise NotImplementedError

    def runtest(self) -> None:
        result: CaseResult = result_of(self._run(_session(self.config).state(self.device)))
        self.user_properties.append(("verdict", result.verdict))
        if result.verdict == "skip":
            pytest.skip(result.reason)
        if result.verdict != "pass":
            raise CaseFailed(result.explain())

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return f"on device {self.device}: {excinfo.value}"
        return super().repr_failure(excinfo)


class RoceconfCase(_DeviceCase):
    """One @roceconf.case function on one device, run by the engine."""

    def __init__(self, *, info: CaseInfo, device: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.info = info
        self._init(device)

    def _run(self, state: DeviceState) -> Dict[str, Any]:
        return state.run.run_python(self.info)

    def reportinfo(self) -> Any:
        return self.path, None, f"roceconf case {self.info.id} on {self.device}"


class CatalogueCase(_DeviceCase):
    """One case of the built-in catalogue (a script or a C++ case) on one device."""

    def __init__(self, *, case: Dict[str, Any], device: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self._init(device)

    def _run(self, state: DeviceState) -> Dict[str, Any]:
        return state.run.run(self.case["id"])

    def reportinfo(self) -> Any:
        return self.case["source"], None, f"roceconf case {self.case['id']} on {self.device}"


def _check_options(config: Any) -> None:
    """Options that cannot work are a usage error now, not a traceback at the first case."""
    try:
        devices = _devices(config)
    except ValueError as e:
        raise pytest.UsageError(f"--roceconf-device {e}") from None
    kind = config.getoption("--roceconf-target")
    if _named(config):
        if kind not in (None, "raw") or (kind and config.getoption("--roceconf-device")):
            raise pytest.UsageError("--roceconf-target is for a single unnamed device; with "
                                    "--roceconf-device or --roceconf-profile each device names "
                                    "its kind (NAME=KIND[:ARG])")
        if config.getoption("--roceconf-quirk"):
            raise pytest.UsageError("--roceconf-quirk is for a single unnamed device; give a "
                                    "named device its quirks: NAME=reference:QUIRK,QUIRK")
    elif kind == "raw" and config.getoption("--roceconf-quirk"):
        raise pytest.UsageError("--roceconf-quirk: quirks are defects of the reference target; "
                                "the raw target is a real device")
    names = [d.name for d in devices]
    for name in names:
        if names.count(name) > 1:
            raise pytest.UsageError(f"device name {name!r} is given twice (name each device "
                                    f"once: NAME=KIND[:ARG])")
    for d in devices:
        if d.quirks:
            try:  # the reference NIC knows its quirks: the message lists them
                _core.Target.reference(d.quirks).close()
            except Exception as e:  # roceconf.TargetError
                what = "--roceconf-quirk" if not _named(config) else f"device {d.name}"
                raise pytest.UsageError(f"{what}: {e}") from None
        if d.kind == "daemon" and not roceconf_binary():
            raise pytest.UsageError(f"device {d.name}: the daemon target needs the roceconf "
                                    "executable (build it, put it on PATH, or set ROCECONF_CLI)")
        if d.kind == "raw" and d.profile and not os.path.isfile(d.profile):
            raise pytest.UsageError(f"--roceconf-profile {d.profile}: no such file")
    ids = {c["id"] for c in _core.catalogue()}
    areas = {c["area"] for c in _core.catalogue()}
    for glob in _catalogue_globs(config):
        if not any(fnmatch.fnmatchcase(x, glob) for x in ids | areas):
            raise pytest.UsageError(f"--roceconf-catalogue {glob!r} matches no case (see "
                                    f"'roceconf run --list')")


def _distributed(config: Any) -> bool:
    return bool(getattr(config.option, "numprocesses", None) or getattr(config.option, "tx", None))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: Any) -> None:
    """Under xdist, each device's cases go to one worker: --dist loadgroup unless another
    grouping was asked for, which would split a device across workers. A worker parses the
    command line again (without this default): the controller tells it (workerinput)."""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        if worker.get("roceconf_loadgroup"):
            config.option.loadgroup = True  # xdist's worker then suffixes ids with the group
        return
    if not _named(config) or not _distributed(config):
        return
    dist = getattr(config.option, "dist", "no")
    if dist in ("no", "load"):
        config.option.dist = "loadgroup"
    elif dist != "loadgroup":
        raise pytest.UsageError(f"--dist {dist} would split a device's cases across workers; "
                                "use --dist loadgroup (the default with named devices)")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: each worker groups the ids by device as the controller schedules."""
    node.workerinput["roceconf_loadgroup"] = node.config.getoption("dist") == "loadgroup"


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "roceconf: a roceconf conformance case")
    config.addinivalue_line("markers", "xdist_group(name): the device whose worker runs it")
    _check_options(config)
    _session(config)  # the xdist controller collects nothing but gathers the workers' reports


def pytest_report_header(config: Any) -> List[str]:
    if not _named(config):
        return []
    return ["roceconf devices: " + ", ".join(d.spec() for d in _devices(config))]


_CASE = re.compile(r"@\s*(?:roceconf\s*\.\s*)?case\s*\(")


def _pytest_collects(file_path: Any, parent: Any) -> bool:
    """Whether pytest's own python plugin collects the file (named on the command line, or
    matching python_files), so it is not collected twice."""
    if parent.session.isinitpath(file_path):
        return True
    for pattern in parent.config.getini("python_files"):
        target = str(file_path) if os.sep in pattern or "/" in pattern else file_path.name
        if fnmatch.fnmatch(target, pattern):
            return True
    return False


def pytest_collect_file(file_path: Any, parent: Any) -> Any:
    """A case file whatever its name (pytest alone collects test_*.py): `pytest examples/`."""
    if file_path.suffix != ".py" or file_path.name.startswith(("_", "conftest", "setup")):
        return None
    if _pytest_collects(file_path, parent):
        return None
    try:
        with open(file_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    if "roceconf" not in text or not _CASE.search(text):
        return None
    return pytest.Module.from_parent(parent, path=file_path)


def pytest_pycollect_makeitem(collector: Any, name: str, obj: Any) -> Any:
    """A Python case: one test per device (`name[device]` when there are several)."""
    info = getattr(obj, "roceconf_case", None)
    if not isinstance(info, CaseInfo):
        return None
    devices = list(_session(collector.config).devices)
    if len(devices) == 1:
        return RoceconfCase.from_parent(collector, name=name, info=info, device=devices[0])
    return [RoceconfCase.from_parent(collector, name=f"{name}[{d}]", info=info, device=d)
            for d in devices]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: Any, config: Any, items: List[Any]) -> None:
    """The catalogue's cases x the devices, after the Python cases (before -k, -m and xdist's
    grouping see the items)."""
    s = _session(config)
    s.local_cases = len({i.info.id for i in items if isinstance(i, RoceconfCase)})
    globs = _catalogue_globs(config)
    if not globs:
        return
    for case in _core.catalogue():
        if not any(fnmatch.fnmatchcase(case["id"], g) or fnmatch.fnmatchcase(case["area"], g)
                   for g in globs):
            continue
        for device in s.devices:
            items.append(CatalogueCase.from_parent(
                session, name=f"{case['id']}[{device}]", nodeid=f"catalogue::{case['id']}"
                f"[{device}]", case=case, device=device))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: a worker's device reports arrive with its output."""
    reports = getattr(node, "workeroutput", {}).get("roceconf_reports")
    if reports and _SESSION is not None:
        _SESSION.from_workers.update(reports)


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    config = session.config
    s = _SESSION
    if s is None:
        return
    out = config.getoption("--roceconf-fleet")
    reports = {name: state.reports() for name, state in s.states.items()} if out else {}
    s.close()
    if not out:
        return
    if hasattr(config, "workerinput"):  # an xdist worker: the controller writes them
        config.workeroutput["roceconf_reports"] = reports
        return
    reports.update(s.from_workers)
    # In command-line order; a device none of whose cases was selected has no report.
    ordered = {name: reports[name] for name in s.devices if name in reports}
    try:
        paths = write_reports(out, ordered)
        summary, _ = merge(paths, os.path.join(out, "fleet.html"), os.path.join(out, "fleet.json"))
    except Exception as e:  # roceconf.Error: a report could not be written
        s.summary = f"roceconf: error: the fleet report: {e}\n"
        return
    missing = [name for name in s.devices if name not in reports]
    if missing:
        summary += f"no report from {', '.join(missing)} (no case of theirs was selected)\n"
    s.summary = summary + f"fleet report {os.path.join(out, 'fleet.html')}\n"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SESSION is not None and _SESSION.summary:
        terminalreporter.section("roceconf fleet")
        terminalreporter.write(_SESSION.summary)


def pytest_unconfigure(config: Any) -> None:
    global _SESSION
    if _SESSION is not None:
        _SESSION.close()
        _SESSION = None
