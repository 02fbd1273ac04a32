"""The classify tests' cases: building one, asking a student's classify about it, and replaying
what the kernel recorded so the grader can judge it against its own measurement."""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from viewcopy.course.check_record import decode, encode
from viewcopy.engine import storage
from viewcopy.engine.devices import available_devices
from viewcopy.engine.expressions import op_function, parent_factory
from viewcopy.engine.quiet import captured_fd2
from viewcopy.exercise import catalogue


@dataclass(frozen=True)
class Case:
    """One classify test: an op on a parent (both expressions), and a hint shown when missed."""

    hint: str
    parent: str
    op: str
    device: str = "cpu"


def the_twenty(devices: Iterable[str] | None = None) -> list[Case]:
    """The twenty on the lab's `x`, on every available device."""
    return on_devices(
        [
            Case(f"item {op.item}: {op.expr}", catalogue.PARENT_EXPR, op.expr)
            for op in catalogue.OPS
        ],
        devices,
    )


def on_devices(cases: Iterable[Case | tuple], devices: Iterable[str] | None = None) -> list[Case]:
    """Each case (a Case or a (hint, parent, op) tuple) on each device, CPU first."""
    chosen = tuple(devices or available_devices())
    cases = [c if isinstance(c, Case) else Case(*c) for c in cases]
    return [Case(c.hint, c.parent, c.op, d) for d in chosen for c in cases]


@dataclass(frozen=True)
class CaseResult:
    """What classify answered on one case, against the verdict measured for it."""

    case: Case
    expected: str
    got: object
    problem: str = ""

    @property
    def right(self) -> bool:
        return not self.problem and self.got == self.expected


def built(case: Case) -> tuple[object, object, str]:
    """A fresh parent, the op's result on it, and its measured verdict."""
    parent = parent_factory(case.parent, case.device)()
    result = op_function(case.op)(parent)
    return parent, result, storage.verdict(result, parent)


def run_case(classify: Callable, case: Case) -> CaseResult:
    """Build the case, measure its truth first, then ask classify, quietly and safely."""
    parent, result, expected = built(case)
    heard = io.StringIO()
    try:
        with (
            captured_fd2() as fd2,
            contextlib.redirect_stderr(heard),
            warnings.catch_warnings(record=True),
        ):
            got = classify(result, parent)
    except Exception as exc:  # a student's classify may raise anything; it is that case's loss
        return CaseResult(case, expected, None, f"raised {type(exc).__name__}: {exc}")
    said = (heard.getvalue() + "\n".join(fd2)).strip()
    if got not in ("view", "copy"):
        return CaseResult(case, expected, got, f"returned {got!r}, not 'view' or 'copy'")
    if said:
        print(f"  (classify wrote to stderr on {case.hint}; hidden from grading: {said[:80]!r})")
    return CaseResult(case, expected, got)


class Answers:
    """What classify answered on each case, as the kernel recorded it: the grader judges these
    against its own measurement instead of calling the student's code."""

    def __init__(self, rows: Iterable[Mapping], tampered: Iterable[str] = ()):
        self.rows = [dict(r) for r in rows]
        self.tampered = list(tampered)
        self._by_case = {
            (r.get("device"), r.get("parent"), r.get("op"), r.get("hint")): r for r in self.rows
        }

    @classmethod
    def from_record(cls, record: Mapping) -> Answers:
        rows = record.get("answers", [])
        return cls(rows if isinstance(rows, list) else [], record.get("tampered") or ())

    def result(self, case: Case) -> CaseResult:
        """The case built and measured here, judged against the recorded answer."""
        _, _, expected = built(case)
        row = self._by_case.get((case.device, case.parent, case.op, case.hint))
        if not isinstance(row, Mapping):
            return CaseResult(case, expected, None, "no answer recorded")
        got, problem = decode(row.get("got")), str(row.get("problem") or "")
        if not problem and got not in ("view", "copy"):
            problem = f"returned {got!r}, not 'view' or 'copy'"
        return CaseResult(case, expected, got, problem)


def answer_row(result: CaseResult) -> dict:
    """One case's answer as the record keeps it (what Answers reads back)."""
    case, got = result.case, result.got
    plain = str.__str__(got) if isinstance(got, str) else encode(got)
    return {
        "device": case.device, "parent": case.parent, "op": case.op, "hint": case.hint,
        "got": plain, "problem": result.problem,
    }  # fmt: skip
