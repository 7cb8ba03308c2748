"""`python3 -m roceconf run [--cases FILE.py|DIR ...] [roceconf run options]`: the same as
`roceconf run ...`, which it becomes (the command line loads the Python cases into its own
process)."""

from __future__ import annotations

import os
import shutil
import sys
from typing import List, Optional


USAGE = "usage: python3 -m roceconf run [--cases FILE.py|DIR ...] [roceconf run options]"


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
    """Replaces this process with `roceconf run ARGS`; returns only when that cannot start."""
    binary = roceconf_binary()
    if not binary:
        print("roceconf: error: python3 -m roceconf run needs the roceconf executable (build it, "
              "put it on PATH, or set ROCECONF_CLI)", file=sys.stderr)
        return 2
    sys.stdout.flush()
    try:
        os.execv(binary, [binary, "run", *args])
    except OSError as e:
        print(f"roceconf: error: cannot run {binary}: {e.strerror}", file=sys.stderr)
    return 2


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "run":
        print(f"roceconf: error: {USAGE}", file=sys.stderr)
        return 2
    return run(argv[1:])
