"""What the notebook's graded test cells call. Each returns the credit as a number (nbgrader's
partial credit) and prints the reason for every point lost; none writes to stderr.

Each credit carries a record of the check's inputs (viewcopy.records): when grading, the grader
runs the same function on that record in its own process (viewcopy.trusted), inside
`judged_outside`, and its number is the one that counts.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from viewcopy import catalogue, truth
from viewcopy.devices import available_devices
from viewcopy.draw import Diagram
from viewcopy.expressions import op_function, parent_factory
from viewcopy.grading import PASS_MARK, judge, truth_table
from viewcopy.locking import status
from viewcopy.measure import measure_catalogue
from viewcopy.predictions import parse_predictions, rule_problem
from viewcopy.quiet import captured_fd2
from viewcopy.records import Credit, decode, encode

RULE_WORDS = re.compile(r"stride|storage|contigu|dtype|device|byte", re.I)
SPECIFIC = re.compile(
    r"\bstrides?\b|\bstorage\b|\d[\d,.]*\s*(?:[kmgt]i?)?b(?:ytes?)?\b|\d[\d,.]*\s*bytes?\b",
    re.I,
)


_OUTSIDE: list[Path] = []


@contextlib.contextmanager
def judged_outside(folder: Path) -> Iterator[None]:
    """Judge as the grader does, outside the kernel: the lock is the one in `folder` (the
    hand-in's copy), and no diagrams are drawn."""
    _OUTSIDE.append(folder)
    try:
        yield
    finally:
        _OUTSIDE.pop()


def _credit(points: float, earned: float, out_of: float) -> float:
    return round(points * earned / out_of, 4) if out_of else float(points)


def _display_html(markup: str) -> None:
    from IPython.display import HTML, display

    display(HTML(markup))


def _judged(predictions: object):
    """Parsed predictions, the measured truth, and (right, why) per item."""
    parsed = parse_predictions(predictions)
    table = truth_table(measure_catalogue(available_devices()))
    return parsed, table, {item: judge(p, table[item]) for item, p in parsed.items()}


def prediction_credit(predictions: object, *, points: float = 5) -> float:
    """Full credit at 16/20 locked before looking, proportional below; none if changed or unlocked.

    Shows the static diagram of every missed item (it survives the feedback HTML).
    """
    record = {"check": "prediction_credit", "predictions": encode(predictions)}
    parsed, table, judged = _judged(predictions)
    lock = status(parsed, _OUTSIDE[-1] if _OUTSIDE else None)
    missed = [item for item, (right, _) in judged.items() if not right]
    correct = len(parsed) - len(missed)
    print(f"{correct}/{len(parsed)} predictions right (full credit from {PASS_MARK}/20).")
    print(lock.reason)
    for item in missed:
        print(
            f"  item {item} {catalogue.op(item).expr}: you said {parsed[item].verdict!r}; "
            f"{judged[item][1]}"
        )
    credit = _credit(points, min(correct, PASS_MARK), PASS_MARK) if lock.state == "locked" else 0.0
    print(f"Credit: {credit:g}/{points:g}")
    for item in missed if not _OUTSIDE else ():
        _display_html(Diagram(table[item].evidence[("x", "cpu")]).html())
    return Credit(credit, record)


def rules_after_credit(predictions: object, rules_after: object, *, points: float = 2) -> float:
    """Credit per miss with a real rule (naming strides, storage, contiguity, dtype, device or
    bytes)."""
    record = {
        "check": "rules_after_credit",
        "predictions": encode(predictions),
        "rules_after": encode(rules_after),
    }
    _, _, judged = _judged(predictions)
    missed = [item for item, (right, _) in judged.items() if not right]
    if not isinstance(rules_after, Mapping):
        print(f"RULES_AFTER must be a dict {{item: rule}}, got {type(rules_after).__name__}.")
        return Credit(0.0, record)
    covered = 0
    for item in missed:
        problem = _rule_after_problem(rules_after.get(item))
        if problem:
            print(f"  item {item} {catalogue.op(item).expr}: {problem}")
        else:
            covered += 1
    print(f"{covered}/{len(missed)} missed items have a rule that would have saved them.")
    return Credit(_credit(points, covered, len(missed)), record)


def _rule_after_problem(rule: object) -> str | None:
    if rule is None:
        return "no rule in RULES_AFTER"
    if not isinstance(rule, str):
        return f"the rule must be a string, got {type(rule).__name__}"
    if (problem := rule_problem(rule)) is not None:
        return problem
    if not RULE_WORDS.search(rule):
        return "a rule names strides, storage, contiguity, dtype, device or bytes"
    return None


def specificity_credit(answer: object, *, item: int, points: float = 1) -> float:
    """Credit when an answer to 21-25 mentions strides, storage or a byte count (card rule 2)."""
    record = {"check": "specificity_credit", "answer": encode(answer)}
    return Credit(_specificity(answer, f"ANSWER_{item}", points), record)


def _specificity(answer: object, name: str, points: float) -> float:
    if not isinstance(answer, str) or not answer.strip():
        print(f"{name} is empty: answer in one or two sentences.")
        return 0.0
    if rule_problem(answer) is not None:
        print(f"{name} is only {answer.strip()!r}: say what it depends on.")
        return 0.0
    if not SPECIFIC.search(answer):
        print(f"{name} is not specific yet: mention strides, storage, or a byte count.")
        return 0.0
    print(f"{name} is specific. (Its content is graded by hand.)")
    return float(points)


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
class Outcome:
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
    return parent, result, truth.verdict(result, parent)


def run_case(classify: Callable, case: Case) -> Outcome:
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
        return Outcome(case, expected, None, f"raised {type(exc).__name__}: {exc}")
    said = (heard.getvalue() + "\n".join(fd2)).strip()
    if got not in ("view", "copy"):
        return Outcome(case, expected, got, f"returned {got!r}, not 'view' or 'copy'")
    if said:
        print(f"  (classify wrote to stderr on {case.hint}; hidden from grading: {said[:80]!r})")
    return Outcome(case, expected, got)


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

    def outcome(self, case: Case) -> Outcome:
        """The case built and measured here, judged against the recorded answer."""
        _, _, expected = built(case)
        row = self._by_case.get((case.device, case.parent, case.op, case.hint))
        if not isinstance(row, Mapping):
            return Outcome(case, expected, None, "no answer recorded")
        got, problem = decode(row.get("got")), str(row.get("problem") or "")
        if not problem and got not in ("view", "copy"):
            problem = f"returned {got!r}, not 'view' or 'copy'"
        return Outcome(case, expected, got, problem)


def _answer_row(outcome: Outcome) -> dict:
    case, got = outcome.case, outcome.got
    plain = str.__str__(got) if isinstance(got, str) else encode(got)
    return {
        "device": case.device, "parent": case.parent, "op": case.op, "hint": case.hint,
        "got": plain, "problem": outcome.problem,
    }  # fmt: skip


def classify_credit(classify: Callable, cases: Iterable[Case], *, points: float) -> float:
    """Credit in proportion to the cases classify gets right; each miss is listed by its hint.

    `classify` is the student's function, or (when the grader judges) the Answers it recorded.
    """
    cases = list(cases)
    if isinstance(classify, Answers):
        changed, outcomes = classify.tampered, [classify.outcome(c) for c in cases]
    else:
        changed, outcomes = truth.tampered(), [run_case(classify, c) for c in cases]
    record = {
        "check": "classify_credit",
        "answers": [_answer_row(o) for o in outcomes],
        "tampered": list(changed),
    }
    if changed:
        print(
            f"torch was modified in this notebook ({', '.join(changed[:5])}); "
            "classify tests need the real torch, so they give no credit."
        )
        return Credit(0.0, record)
    right = sum(o.right for o in outcomes)
    for o in outcomes:
        if not o.right:
            print(miss_line(o))
    print(summary_line(right, len(outcomes)))
    return Credit(_credit(points, right, len(outcomes)), record)


# The lines classify_credit prints, and their parser (the class report reads graded outputs):
# side by side so that format and parse cannot drift.
_MISS = re.compile(r"  \[(?P<device>[^\]]+)\] (?P<hint>.+?): (?P<why>(?:said|raised|returned) .*)")
_SUMMARY = re.compile(r"classify right on (?P<right>\d+)/(?P<total>\d+) cases\.")


class Miss(NamedTuple):
    """One case classify missed, as its line says: the device, the case's hint, and why."""

    device: str
    hint: str
    why: str

    @property
    def answered(self) -> bool:
        """True when classify answered (wrongly); False when it raised or returned junk."""
        return self.why.startswith("said ")


def miss_line(outcome: Outcome) -> str:
    """`  [device] hint: why`, on one line whatever the student's exception message holds."""
    why = outcome.problem or f"said {outcome.got!r}, measured {outcome.expected!r}"
    return " ".join(f"  [{outcome.case.device}] {outcome.case.hint}: {why}".splitlines())


def summary_line(right: int, total: int) -> str:
    return f"classify right on {right}/{total} cases."


def parse_misses(text: str) -> list[Miss] | None:
    """The misses a classify test cell's output lists; None when it holds no finished run.

    Only the lines just above the last summary line count, as many as it says were missed:
    anything the student's classify printed came before them.
    """
    lines = text.splitlines()
    ends = [i for i, line in enumerate(lines) if _SUMMARY.fullmatch(line)]
    if not ends:
        return None
    summary = _SUMMARY.fullmatch(lines[ends[-1]])
    missed = int(summary["total"]) - int(summary["right"])
    block = lines[ends[-1] - missed : ends[-1]] if 0 <= missed <= ends[-1] else []
    found = [_MISS.fullmatch(line) for line in block]
    if len(found) != missed or not all(found):
        return None
    return [Miss(**m.groupdict()) for m in found]
