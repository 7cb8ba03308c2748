"""Running Python cases against a target from Python (tests, notebooks, the pytest plugin)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _roceconf as _core
from .case import CaseInfo
from .errors import CaseError

__all__ = ["CaseResult", "run_case", "result_of"]


@dataclass
class CaseResult:
    """A case's outcome, as the reports have it."""

    id: str
    verdict: str  # pass, fail, skip, error, inconclusive
    reason: str
    failed_step: str
    diffs: List[Tuple[str, str, str]]
    events: List[Dict[str, Any]] = field(repr=False)
    duration_ns: int = 0
    clause: str = ""
    requirement: str = ""
    citation: str = ""
    rule: str = ""
    release: str = ""
    checked: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def explain(self) -> str:
        """The failing step, the reason and the field diffs, as the terminal report shows them."""
        lines = [f"{self.id}: {self.verdict.upper()}"]
        if self.failed_step:
            lines.append(f"  at {self.failed_step}")
        if self.reason:
            lines.append(f"  {self.reason}")
        lines += [f"  {f} expected {e} vs actual {a}" for f, e, a in self.diffs]
        return "\n".join(lines)


def run_case(case: Union[CaseInfo, Callable], target: Optional[Any] = None, *,
             quirks: Sequence[str] = (), seed: int = 1, expect_floor_ms: float = 200.0,
             silence_floor_ms: float = 20.0) -> CaseResult:
    """Runs one case (a CaseInfo or a decorated function) against `target`, by default a fresh
    reference target with these quirks; the target is reset first, the round trip measured."""
    info = getattr(case, "roceconf_case", case)
    if not isinstance(info, CaseInfo):
        raise CaseError("run_case takes a @roceconf.case function")
    if target is None:
        target = _core.Target.reference(list(quirks))
    elif quirks:
        raise CaseError("quirks apply to the default reference target only")
    return result_of(_core.run_case(target, info, seed, expect_floor_ms, silence_floor_ms, True))


def result_of(r: Dict[str, Any]) -> CaseResult:
    """A CaseResult from the engine's result dict."""
    return CaseResult(id=r["id"], verdict=r["verdict"], reason=r["reason"],
                      failed_step=r["failed_step"], diffs=[tuple(d) for d in r["diffs"]],
                      events=r["events"], duration_ns=r["duration_ns"], clause=r["clause"],
                      requirement=r["requirement"], citation=r.get("citation", ""),
                      rule=r.get("rule", ""), release=r.get("release", ""),
                      checked=r.get("checked", ""))
