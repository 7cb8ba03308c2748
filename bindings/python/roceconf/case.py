"""Python cases: a function taking the case context, decorated with its metadata.

    @roceconf.case(id="vendor/pkey-policy", clause="IBA Vol 1 10.9", requirement="MUST",
                   needs=["responder"])
    def pkey_policy(ctx):
        \"\"\"A SEND with a foreign P_Key is dropped silently.\"\"\"
        c = ctx.connect()
        ...

The first docstring line is the title, the rest the description. Decorated functions stay
callable, register in roceconf.registered_cases(), and run beside the built-in catalogue with
`roceconf run --cases FILE.py|DIR`, or under pytest (roceconf.pytest_plugin).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, List, Optional, Sequence

from .context import Context
from .errors import CaseError

__all__ = ["case", "CaseInfo", "registered_cases", "load_cases"]

_REGISTRY: List["CaseInfo"] = []
_LEVELS = ("MUST", "SHOULD", "MAY")
_CAPABILITIES = ("listener", "responder", "control", "pkey-limited", "mw-type1", "mw-type2", "vlan",
                 "ipv6", "cc", "destructive")


@dataclass
class CaseInfo:
    """A registered case: its catalogue metadata and the function."""

    id: str
    area: str
    title: str
    description: str
    clause: str
    requirement: str
    needs: List[str]
    source: str
    func: Callable[[Context], Any] = field(repr=False)
    # The citation split from its paraphrase (cases/README.md): clause numbers and statement IDs,
    # the rule they state, the release (empty: the catalogue's) and where it was checked.
    citation: str = ""
    rule: str = ""
    release: str = ""
    checked: str = ""

    def invoke(self, handle: Any) -> None:
        """Runs the function on a fresh context (the engine calls this, having checked needs)."""
        self.func(Context(handle))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def case(id: Optional[str] = None, *, clause: str = "", requirement: str = "MUST",
         needs: Sequence[str] = (), area: Optional[str] = None, title: Optional[str] = None,
         description: Optional[str] = None, citation: str = "", rule: str = "",
         release: str = "", checked: str = "") -> Callable[[Callable], Callable]:
    """Registers a function as a conformance case.

    id: "area/name" (default: "<area>/<function-name>"); area: default the id's first part, or
    "custom"; clause: the specification clause checked, as one line; or, as the catalogue has
    it, citation (clause numbers and statement IDs only, "9.7.5.1 C9-97"), rule (what they
    require), release (default the catalogue's, IBA Vol 1 Release 1.2.1 + Annex A17) and checked
    (where the citation was checked, or "unchecked"); requirement: MUST, SHOULD or MAY;
    needs: capabilities (listener, responder, control, pkey-limited, mw-type1, mw-type2, vlan,
    ipv6, cc) the target must have, else SKIP."""
    if requirement not in _LEVELS:
        raise CaseError(f"requirement is MUST, SHOULD or MAY, not {requirement!r}")
    for need in needs:
        if need not in _CAPABILITIES:
            raise CaseError(f"unknown capability {need!r} ({', '.join(_CAPABILITIES)})")
    if not clause and not citation:
        raise CaseError("a case names the clause it checks (clause=... or citation=...)")
    if citation and re.search(r"[():]", citation):
        raise CaseError("citation= holds clause numbers and statement IDs only; "
                        "the paraphrase goes in rule=")

    def register(func: Callable) -> Callable:
        if not callable(func):
            raise CaseError("@roceconf.case decorates a function taking the case context")
        case_area = area or (id.split("/", 1)[0] if id and "/" in id else "custom")
        case_id = id if id and "/" in id else f"{case_area}/{_slug(id or func.__name__)}"
        doc = inspect.cleandoc(func.__doc__ or "")
        first, _, rest = doc.partition("\n")
        try:
            path = inspect.getsourcefile(func) or "?"
            line = inspect.getsourcelines(func)[1]
        except (OSError, TypeError):
            path, line = "?", 0
        rel = os.path.relpath(path) if path != "?" else path
        if rel.startswith(".."):
            rel = path
        info = CaseInfo(id=case_id, area=case_area, title=title or first.strip() or func.__name__,
                        description=description or rest.strip().replace("\n", " "),
                        clause=clause, requirement=requirement, needs=list(needs),
                        source=f"{rel}:{line}", func=func, citation=citation, rule=rule,
                        release=release, checked=checked)
        for other in _REGISTRY:
            if other.id == info.id and other.source != info.source:
                raise CaseError(f"case id '{info.id}' of {info.source} is taken by {other.source}")
        _REGISTRY[:] = [c for c in _REGISTRY if c.id != info.id]
        _REGISTRY.append(info)
        func.roceconf_case = info  # type: ignore[attr-defined]
        return func

    return register


def registered_cases() -> List[CaseInfo]:
    """Every case registered so far, in registration order."""
    return list(_REGISTRY)


def _files(paths: Iterable[str]) -> List[str]:
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                out += [os.path.join(root, n) for n in sorted(names)
                        if n.endswith(".py") and not n.startswith(("_", "conftest"))]
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise CaseError(f"--cases {p}: no such file or directory")
    return out


def load_cases(paths: Iterable[str]) -> List[CaseInfo]:
    """Imports Python case files (directories: every *.py under them) and returns the cases
    they register. A file that does not import raises CaseError naming it."""
    paths = list(paths)
    found: List[CaseInfo] = []
    for path in _files(paths):
        before = {c.id: c for c in _REGISTRY}
        module_name = "roceconf_cases_" + _slug(os.path.abspath(path)).replace("-", "_")
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise CaseError(f"{path}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        directory = os.path.dirname(os.path.abspath(path))
        sys.path.insert(0, directory)  # helpers beside the case file import as usual
        try:
            spec.loader.exec_module(module)
        except CaseError as e:
            raise CaseError(f"{path}: {e}") from e
        except Exception as e:  # the file's own error, reported as one line
            raise CaseError(f"{path}: {type(e).__name__}: {e}") from e
        finally:
            sys.path.remove(directory)
        found += [c for c in _REGISTRY if before.get(c.id) is not c]
    if not found:
        raise CaseError(f"no @roceconf.case function in {', '.join(paths)}")
    return found
