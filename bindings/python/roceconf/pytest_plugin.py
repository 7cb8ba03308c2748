"""pytest plugin: `pytest my_cases.py` runs every @roceconf.case function of the module as a
test against a target, failing on FAIL, ERROR and INCONCLUSIVE and skipping on SKIP.

Loaded automatically when the package is installed or on PYTHONPATH (its pytest11 entry point),
or with `-p roceconf.pytest_plugin`. Any .py file with a @roceconf.case function is collected,
whatever its name and without an ini file (`pytest examples/`), beside pytest's own test files.
Options: --roceconf-target reference|daemon|raw, --roceconf-quirk NAME (repeatable),
--roceconf-profile FILE (raw), --roceconf-seed N; a bad one is a usage error (exit 4).
Fixture: `roceconf_target`, the session's target (reset before each case).
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Any, Optional

import pytest

from . import _roceconf as _core
from .case import CaseInfo
from .cli import roceconf_binary
from .runner import run_case


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("roceconf", "roceconf conformance cases")
    group.addoption("--roceconf-target", default="reference",
                    choices=("reference", "daemon", "raw"),
                    help="target the cases run against (default: the in-process reference)")
    group.addoption("--roceconf-quirk", action="append", default=[],
                    help="a defect of the reference target (repeatable)")
    group.addoption("--roceconf-profile", default="", help="raw target: profile file")
    group.addoption("--roceconf-seed", type=int, default=1, help="seed of the run (default 1)")


_TARGET: Optional[Any] = None


def _target(config: Any) -> Any:
    global _TARGET
    if _TARGET is None:
        kind = config.getoption("--roceconf-target")
        quirks = config.getoption("--roceconf-quirk")
        if kind == "reference":
            _TARGET = _core.Target.reference(quirks)
        elif kind == "daemon":
            _TARGET = _core.Target.daemon(quirks, roceconf_binary())
        else:
            _TARGET = _core.Target.raw(config.getoption("--roceconf-profile"))
    return _TARGET


def pytest_unconfigure(config: Any) -> None:
    global _TARGET
    if _TARGET is not None:
        _TARGET.close()
        _TARGET = None


@pytest.fixture(scope="session")
def roceconf_target(pytestconfig: Any) -> Any:
    """The target of this session (--roceconf-target)."""
    return _target(pytestconfig)


class CaseFailed(Exception):
    pass


class RoceconfCase(pytest.Item):
    """One @roceconf.case function, run by the engine."""

    def __init__(self, *, info: CaseInfo, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.info = info
        self.add_marker(pytest.mark.roceconf)

    def runtest(self) -> None:
        result = run_case(self.info, _target(self.config), seed=self.config.getoption(
            "--roceconf-seed"))
        self.user_properties.append(("verdict", result.verdict))
        if result.verdict == "skip":
            pytest.skip(result.reason)
        if result.verdict != "pass":
            raise CaseFailed(result.explain())

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Any:
        return self.path, None, f"roceconf case {self.info.id}"


def _check_options(config: Any) -> None:
    """Options that cannot work are a usage error now, not a traceback at the first case."""
    kind = config.getoption("--roceconf-target")
    quirks = config.getoption("--roceconf-quirk")
    profile = config.getoption("--roceconf-profile")
    if quirks and kind == "raw":
        raise pytest.UsageError("--roceconf-quirk: quirks are defects of the reference target; "
                                "the raw target is a real device")
    if quirks:
        try:  # the reference NIC knows its quirks: the message lists them
            _core.Target.reference(quirks).close()
        except Exception as e:  # roceconf.TargetError
            raise pytest.UsageError(f"--roceconf-quirk: {e}") from None
    if kind == "daemon" and not roceconf_binary():
        raise pytest.UsageError("--roceconf-target daemon needs the roceconf executable (build "
                                "it, put it on PATH, or set ROCECONF_CLI)")
    if profile and not os.path.isfile(profile):
        raise pytest.UsageError(f"--roceconf-profile {profile}: no such file")
    if profile and kind != "raw":
        raise pytest.UsageError("--roceconf-profile is for --roceconf-target raw")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "roceconf: a roceconf conformance case")
    _check_options(config)


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
    info = getattr(obj, "roceconf_case", None)
    if isinstance(info, CaseInfo):
        return RoceconfCase.from_parent(collector, name=name, info=info)
    return None
