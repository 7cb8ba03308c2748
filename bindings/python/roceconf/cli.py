"""`python3 -m roceconf run [--cases FILE.py|DIR ...] [roceconf run options]`: the command
line's run with Python cases beside the built-in catalogue, into the same reports. `roceconf
run --cases ...` re-executes this."""

from __future__ import annotations

import os
import shutil
import sys
from typing import List, Optional

from . import _roceconf as _core
from .case import load_cases
from .errors import Error

USAGE = "usage: python3 -m roceconf run [--cases FILE.py|DIR ...] [roceconf run options]"


def _case_paths(args: List[str]) -> List[str]:
    paths = []
    for i, a in enumerate(args):
        if a == "--cases" and i + 1 < len(args):
            paths.append(args[i + 1])
        elif a.startswith("--cases="):
            paths.append(a.split("=", 1)[1])
    return paths


def roceconf_binary() -> str:
    """The roceconf executable (for the daemon target): ROCECONF_CLI, the build tree's next to
    this package, or the one on PATH."""
    given = os.environ.get("ROCECONF_CLI")
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.normpath(os.path.join(here, "..", "..", "roceconf"))
    if os.access(beside, os.X_OK) and os.path.isfile(beside):
        return beside
    return shutil.which("roceconf") or ""


def run(args: List[str]) -> int:
    """`roceconf run ARGS` with the cases of every --cases path; the exit status."""
    try:
        cases = load_cases(_case_paths(args)) if _case_paths(args) else []
    except Error as e:
        print(f"roceconf: error: {e}", file=sys.stderr)
        return 2
    os.environ.setdefault("ROCECONF_CLI", roceconf_binary())
    sys.stdout.flush()
    return _core.run_command_line(args, cases)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "run":
        print(f"roceconf: error: {USAGE}", file=sys.stderr)
        return 2
    return run(argv[1:])
