"""The class report: what an instructor needs before the next lecture, from a graded course.

It reads the nbgrader course folder and runs none of the students' code: PREDICTIONS and the lock
from `submitted/` (viewcopy.course.handin), the classify tests' printed misses from
`autograded/` (viewcopy.notebook.miss_lines), the scores from `gradebook.db` (opened read-only).
Predictions are judged against the truth measured on this machine, never against a typed key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pandas as pd
import torch

from viewcopy.course.assignment import (
    ASSIGNMENT,
    CLASSIFY_CELLS,
    NOTEBOOK,
    Grades,
    course_config,
    grade_id,
    gradebook_url,
    read_grades,
    sqlite_file,
)
from viewcopy.course.handin import (
    LOCK_STATES,
    LOCKED,
    LOCKED_NOT_VERIFIED,
    LOCKED_VERIFIED,
    NO_SUBMISSION,
    HandIn,
    read_handin,
)
from viewcopy.engine.devices import available_devices
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import ItemTruth, measured_truth
from viewcopy.exercise.next_ops import measure_pool
from viewcopy.exercise.next_predictions import NEXT
from viewcopy.exercise.predictions import VERDICT_CHOICES
from viewcopy.exercise.production import PRODUCTION
from viewcopy.exercise.production_model import copy_lines, forward_listing
from viewcopy.exercise.scoring import (
    CARD,
    PASS_MARK,
    BaseRate,
    Score,
    base_rate,
    judge_prediction,
    score_sheet,
)
from viewcopy.grading.record import FAILED, INTERRUPTED, read_record, record_path
from viewcopy.locking.judge import LockPolicy
from viewcopy.notebook.checks import held_share, next_ops_held, rule_after_problem
from viewcopy.notebook.miss_lines import Miss, parse_misses

REFUSED = "tried to lock after the reveal"
"""The lock section's count of students whose late locks the lock service refused."""


MEMORISED_BELOW = 0.6
"""A student is flagged as having memorised when the twenty pass and the next ops fall below
this share."""


@dataclass(frozen=True)
class FamilyTransfer:
    """One family of ops: how the class did on the twenty in it and on the next ops in it."""

    family: str
    twenty_right: int
    twenty_total: int
    next_right: int
    next_total: int

    @property
    def twenty_share(self) -> float | None:
        return self.twenty_right / self.twenty_total if self.twenty_total else None

    @property
    def next_share(self) -> float | None:
        return self.next_right / self.next_total if self.next_total else None

    @property
    def gap(self) -> float | None:
        """How much worse the next ops went than the twenty (None without both)."""
        if self.twenty_share is None or self.next_share is None:
            return None
        return self.twenty_share - self.next_share


@dataclass(frozen=True)
class StudentLine:
    """One student: lock state, predictions right, gradebook scores and classify misses."""

    student: str
    lock: str
    right: int | None
    credited: int
    grades: Grades
    classify: Mapping[str, tuple[Miss, ...] | None]
    problems: tuple[str, ...]
    refused: int = 0
    """Locks the course's lock service refused because they came after the reveal."""
    balanced: float | None = None
    """The balanced score of the predictions (0-1), None when they are unreadable."""
    passes: bool = False
    """Locked before looking and over the course's line (the card's or the balanced one)."""
    flag: str = ""
    """`constant` or `no better than the base rate`: a score that is not knowledge."""
    next_right: int | None = None
    """Next ops predicted right (of `next_total`), None without a readable next sheet."""
    next_total: int = 0
    families: Mapping[str, tuple[int, int, int, int]] = field(default_factory=dict)
    """Family -> (right on the twenty, of how many, right on the next ops, of how many)."""
    rules: Mapping[str, tuple[int, int, float]] = field(default_factory=dict)
    """Family -> (missed items with a rule after, of those tested on locked next ops, how far they
    held there, summed: each 0-1)."""

    @property
    def rules_never_held(self) -> bool:
        """Rules after were tested on the next ops and none of them held at all."""
        tested = [(n, held) for _, n, held in self.rules.values() if n]
        return bool(tested) and not any(held for _, held in tested)

    @property
    def memorised(self) -> bool:
        """High on the twenty, low on ops never seen: memorised, did not learn the rule."""
        return (
            self.right is not None and self.next_right is not None
            and self.right >= PASS_MARK and self.next_right < MEMORISED_BELOW * self.next_total
        )  # fmt: skip

    @property
    def auto_total(self) -> float:
        return sum(score or 0.0 for score, _ in self.grades.values())

    @property
    def max_total(self) -> float:
        return sum(maximum for _, maximum in self.grades.values())


@dataclass(frozen=True)
class ItemMisses:
    """Who mispredicted one item before looking, and what they said instead."""

    item: int
    expr: str
    truth: str
    said: Mapping[str, int]
    students: tuple[str, ...]

    @property
    def wrong(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class TrapMisses:
    """One classify test case and the students it caught: wrong answers, and crashes or junk."""

    cell: str
    device: str
    hint: str
    wrong: tuple[str, ...]
    failed: tuple[str, ...]

    @property
    def caught(self) -> int:
        return len(self.wrong) + len(self.failed)


@dataclass(frozen=True)
class Specificity:
    """How many of the graded answers to one of the five are specific (the specific_N cell)."""

    item: int
    specific: int
    graded: int

    @property
    def fraction(self) -> float:
        return self.specific / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class ClassReport:
    """Everything the report shows, built by build_report; `rows` flattens it for the CSV."""

    assignment: str
    course: Path
    devices: tuple[str, ...]
    torch: str
    students: tuple[StudentLine, ...]
    judged: int
    misconceptions: tuple[ItemMisses, ...]
    classify_runs: Mapping[str, int]
    traps: tuple[TrapMisses, ...]
    specificity: tuple[Specificity, ...]
    lock_service: bool = False
    """The course runs a lock service: locks are verified against its records."""
    scoring: str = CARD
    """How the course credits the twenty (exercise.scoring.POLICIES)."""
    base: BaseRate | None = None
    """What answering the most frequent verdict to all twenty scores, measured here."""
    transfer: tuple[FamilyTransfer, ...] = ()
    """Per family, the class's share right on the twenty against on the next ops."""
    thought_free: tuple[tuple[int, str, tuple[str, ...]], ...] = ()
    """Each line of the production forward that copies: (line, code, who said "no copy")."""

    @property
    def rule_families(self) -> dict[str, tuple[int, int, float]]:
        """Per family, over the class: missed items with a rule after, how many were tested on
        locked next ops of their family, and the share of those they held on (None: none was)."""
        sums: dict[str, list] = {}
        for s in self.students:
            for family, counts in s.rules.items():
                total = sums.setdefault(family, [0, 0, 0.0])
                for i, count in enumerate(counts):
                    total[i] += count
        return {f: (w, t, h / t if t else None) for f, (w, t, h) in sorted(sums.items())}

    @property
    def lock_counts(self) -> dict[str, int]:
        """Students per lock state; with a lock service, locks split into verified or not, and
        the students whose locks after the reveal it refused."""
        counts = Counter(s.lock for s in self.students)
        hidden = (LOCKED,) if self.lock_service else (LOCKED_VERIFIED, LOCKED_NOT_VERIFIED)
        states = {state: counts[state] for state in LOCK_STATES if state not in hidden}
        if self.lock_service:
            states[REFUSED] = sum(s.refused > 0 for s in self.students)
        return states

    @property
    def handed_in(self) -> tuple[StudentLine, ...]:
        return tuple(s for s in self.students if s.lock != NO_SUBMISSION)

    @property
    def problems(self) -> list[tuple[str, str]]:
        return [(s.student, p) for s in self.students for p in s.problems]


def build_report(course: Path, assignment: str = ASSIGNMENT) -> ClassReport:
    """Read the graded course and judge it against the truth measured here."""
    course = Path(course).resolve()
    gradebook = sqlite_file(gradebook_url(course))
    if not ((gradebook is None or gradebook.is_file()) or (course / "submitted").is_dir()):
        missing = f"{course} has no {gradebook.name} and no submitted/"
        raise FileNotFoundError(f"{missing}: not graded yet")
    devices = available_devices()
    table = measured_truth(devices)
    grades = read_grades(course, assignment)
    failures = {
        s: o.reason
        for s, o in read_record(record_path(course, assignment)).items()
        if o.status in (FAILED, INTERRUPTED)
    }
    found = sorted({*grades, *_folders(course / "submitted", assignment)})
    config = course_config(course)
    policy, scoring = LockPolicy.from_config(config), _scoring(config)
    handins = [
        read_handin(course / "submitted" / s / assignment, s, policy, assignment) for s in found
    ]
    students = tuple(
        _student_line(
            h, table, grades.get(h.student), course / "autograded", assignment, failures, scoring
        )
        for h in handins
    )
    judged = [h for h in handins if h.before_looking is not None]
    return ClassReport(
        assignment=assignment,
        course=course,
        devices=devices,
        torch=torch.__version__,
        students=students,
        judged=len(judged),
        misconceptions=tuple(_item_misses(item, judged, table) for item in catalogue.ITEMS),
        classify_runs={
            cell: sum(s.classify.get(cell) is not None for s in students) for cell in CLASSIFY_CELLS
        },
        traps=_traps(students),
        specificity=tuple(_specificity_share(q.item, students) for q in catalogue.QUESTIONS),
        lock_service=policy.service_data is not None,
        scoring=scoring,
        base=base_rate(table),
        transfer=_transfer(students),
        thought_free=_thought_free(handins),
    )


def _thought_free(handins: list[HandIn]):
    """Per copying line of the production forward, the students who predicted it free."""
    sheets = {h.student: h.later.get(PRODUCTION.key) for h in handins}
    copying = copy_lines()
    return tuple(
        (n, code, tuple(s for s, sheet in sheets.items() if sheet and sheet[n].verdict != "copy"))
        for n, code in forward_listing()
        if n in copying
    )


def _folders(root: Path, assignment: str) -> list[str]:
    return [p.parent.name for p in root.glob(f"*/{assignment}") if p.is_dir()]


def _student_line(
    handin: HandIn,
    table: Mapping[int, ItemTruth],
    grades: Grades | None,
    autograded: Path,
    assignment: str,
    failures: Mapping[str, str],
    scoring: str,
) -> StudentLine:
    problems = [handin.problem] if handin.problem else []
    score = None
    if handin.submitted is not None:
        state = "locked" if handin.counts else "not counted"
        score = score_sheet(handin.submitted, table, state, policy=scoring)
    if not grades and handin.lock != NO_SUBMISSION:
        problems.append("no graded submission in the gradebook")
    classify, missing = read_classify(autograded / handin.student / assignment / NOTEBOOK)
    if handin.refused:
        problems.append(
            f"tried to lock again after the reveal: the lock service refused {handin.refused} "
            "lock(s)"
        )
    if handin.student in failures:
        problems.append(f"grading failed: {failures[handin.student]}")
    elif missing and handin.lock != NO_SUBMISSION:
        problems.append(missing)
    return StudentLine(
        student=handin.student,
        lock=handin.lock,
        right=score.correct if score else None,
        credited=score.correct if score and handin.counts else 0,
        grades=grades or {},
        classify=classify,
        problems=tuple(problems),
        refused=handin.refused,
        balanced=score.balanced if score else None,
        passes=bool(score and score.passed),
        flag=_flag(score),
        **_next_part(handin, table),
        rules=_rules_part(handin, table),
    )


def _rules_part(handin: HandIn, table: Mapping[int, ItemTruth]) -> dict:
    """Per family: the missed items with a rule after, how many were tested on locked next ops
    of their family, and how far they held there (as `check_rules_after` credits them; the rest
    are untested, or judged by what they name where the draw holds none of their family)."""
    if handin.submitted is None or not isinstance(handin.rules_after, dict):
        return {}
    held = next_ops_held(handin.record)
    found: dict[str, list] = {}
    for item, prediction in handin.submitted.items():
        right = judge_prediction(prediction, table[item])[0]
        if right or rule_after_problem(handin.rules_after.get(item)) is not None:
            continue
        family = catalogue.op(item).family
        counts = found.setdefault(family, [0, 0, 0.0])
        counts[0] += 1
        if (share := held_share(held.get(family, ()))) is not None:
            counts[1] += 1
            counts[2] += share
    return {family: tuple(c) for family, c in found.items()}


def _next_part(handin: HandIn, table: Mapping[int, ItemTruth]) -> dict:
    """The StudentLine fields of the next ops: right, and per family twenty against next."""
    ops, written = handin.next_ops, handin.later.get(NEXT.key)
    if written is None or handin.submitted is None:
        return {}
    measured = measure_pool()
    families: dict[str, list[int]] = {}
    for op in catalogue.OPS:
        counts = families.setdefault(op.family, [0, 0, 0, 0])
        counts[0] += judge_prediction(handin.submitted[op.item], table[op.item])[0]
        counts[1] += 1
    right = 0
    for op in ops:
        counts = families.setdefault(op.family, [0, 0, 0, 0])
        hit = written[op.id].verdict == measured[op.id].verdict
        counts[2] += hit
        counts[3] += 1
        right += hit
    return {
        "next_right": right,
        "next_total": len(ops),
        "families": {f: tuple(c) for f, c in families.items()},
    }


def _transfer(students: tuple[StudentLine, ...]) -> tuple[FamilyTransfer, ...]:
    """Per family, summed over the students with a next sheet; worst transfer first."""
    sums: dict[str, list[int]] = {}
    for s in students:
        for family, counts in s.families.items():
            total = sums.setdefault(family, [0, 0, 0, 0])
            for i, n in enumerate(counts):
                total[i] += n
    rows = [FamilyTransfer(f, *c) for f, c in sums.items()]
    return tuple(sorted(rows, key=lambda r: (r.gap is None, -(r.gap or 0), r.family)))


def _flag(score: Score | None) -> str:
    if score is None or not score.no_better_than_base:
        return ""
    return "constant" if score.constant else "no better than the base rate"


def _scoring(config) -> str:
    """The course's policy for crediting the twenty (c.PredictionScoring.policy)."""
    return config.get("PredictionScoring", {}).get("policy", CARD)


def read_classify(path: Path) -> tuple[dict[str, tuple[Miss, ...] | None], str]:
    """The misses each classify test cell printed in an autograded notebook (None: no finished
    run), and what was missing, if anything."""
    none = dict.fromkeys(CLASSIFY_CELLS)
    try:
        notebook = nbformat.read(path, as_version=4)
    except FileNotFoundError:
        return none, "no autograded notebook"
    except (OSError, ValueError, AttributeError) as exc:
        return none, f"the autograded notebook is unreadable ({exc})"
    out = dict(none)
    for cell in notebook.cells:
        if grade_id(cell) in out and cell.cell_type == "code":
            text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
            misses = parse_misses(text)
            out[grade_id(cell)] = None if misses is None else tuple(misses)
    return out, ""


def _item_misses(item: int, judged: list[HandIn], table: Mapping[int, ItemTruth]) -> ItemMisses:
    truth = table[item]
    wrong = [
        (h.student, h.before_looking[item].verdict)
        for h in judged
        if not judge_prediction(h.before_looking[item], truth)[0]
    ]
    flips = f"; flips with {', '.join(truth.flips)}" if truth.flips else ""
    return ItemMisses(
        item=item,
        expr=catalogue.op(item).expr,
        truth=f"{truth.reference}{flips}",
        said=dict(Counter(verdict for _, verdict in wrong).most_common()),
        students=tuple(student for student, _ in wrong),
    )


def _traps(students: tuple[StudentLine, ...]) -> tuple[TrapMisses, ...]:
    caught: dict[tuple[str, str, str], tuple[list[str], list[str]]] = {}
    for s in students:
        for cell, misses in s.classify.items():
            # a case counts once per student, whatever the output repeats
            once = {(cell, m.device, m.hint): m.answered for m in misses or ()}
            for key, answered in once.items():
                wrong, failed = caught.setdefault(key, ([], []))
                (wrong if answered else failed).append(s.student)
    traps = [TrapMisses(*key, tuple(w), tuple(f)) for key, (w, f) in caught.items()]
    return tuple(sorted(traps, key=lambda t: (-len(t.wrong), -t.caught, t.cell, t.hint)))


def _specificity_share(item: int, students: tuple[StudentLine, ...]) -> Specificity:
    scores = [s.grades[f"specific_{item}"] for s in students if f"specific_{item}" in s.grades]
    specific = sum(score is not None and score >= maximum for score, maximum in scores)
    return Specificity(item, specific, len(scores))


def rows(report: ClassReport) -> Iterator[tuple[str, str, str, object]]:
    """Every number of the report as (section, key, measure, value): the CSV's rows.

    Sections: class (counts, the scoring policy, the base rate, the mean raw and balanced
    scores), misconceptions (per item), lock (per state), production (per copying line of the
    forward: how many thought it free), transfer (per family: right and total
    on the twenty and on the next ops), rules_after (per family: missed items with a rule, how
    many met next ops of their family, the share they held there; students whose never held),
    student (lock, right, balanced, credited_right, passes,
    flag, next_right, memorised, totals), grades (gradebook score per cell; empty: graded by
    hand), grade_max, classify_runs, traps (per case), specificity (per question), problems.
    """
    yield "class", report.assignment, "students", len(report.students)
    yield "class", report.assignment, "handed_in", len(report.handed_in)
    yield "class", report.assignment, "judged_before_looking", report.judged
    yield "class", report.assignment, "passing", sum(s.passes for s in report.students)
    yield "class", report.assignment, "scoring", report.scoring
    if report.base is not None:
        yield "class", report.assignment, "base_rate_verdict", report.base.verdict
        yield "class", report.assignment, "base_rate_right", report.base.count
    read = [s for s in report.students if s.balanced is not None]
    if read:
        yield (
            "class",
            report.assignment,
            "mean_right",
            round(sum(s.right for s in read) / len(read), 4),
        )
        mean_balanced = sum(s.balanced for s in read) / len(read)
        yield "class", report.assignment, "mean_balanced", round(mean_balanced, 4)
    yield "class", report.assignment, "no_better_than_base", sum(bool(s.flag) for s in read)
    for family, (with_rule, tested, held) in report.rule_families.items():
        yield "rules_after", family, "with_rule", with_rule
        yield "rules_after", family, "tested", tested
        yield "rules_after", family, "held_share", None if held is None else round(held, 4)
    for student in report.students:
        if student.rules_never_held:
            yield "rules_after", student.student, "never_held", True
    for m in report.misconceptions:
        key = f"{m.item} {m.expr}"
        yield "misconceptions", key, "wrong", m.wrong
        for verdict in VERDICT_CHOICES:
            yield "misconceptions", key, f"said {verdict}", m.said.get(verdict, 0)
    for state, count in report.lock_counts.items():
        yield "lock", state, "students", count
    for line, code, students in report.thought_free:
        yield "production", f"{line} {code}", "thought_free", len(students)
    for f in report.transfer:
        yield "transfer", f.family, "twenty_right", f.twenty_right
        yield "transfer", f.family, "twenty_total", f.twenty_total
        yield "transfer", f.family, "next_right", f.next_right
        yield "transfer", f.family, "next_total", f.next_total
    for s in report.students:
        yield "student", s.student, "lock", s.lock
        yield "student", s.student, "right", s.right
        yield "student", s.student, "balanced", None if s.balanced is None else round(s.balanced, 4)
        yield "student", s.student, "credited_right", s.credited
        yield "student", s.student, "passes", int(s.passes)
        yield "student", s.student, "flag", s.flag
        yield "student", s.student, "next_right", s.next_right
        yield "student", s.student, "memorised", int(s.memorised)
        if s.grades:
            yield "student", s.student, "auto_total", round(s.auto_total, 4)
            yield "student", s.student, "max_total", s.max_total
    for s in report.students:
        for cell, (score, _) in s.grades.items():
            yield "grades", s.student, cell, score
    maxima = {cell: m for s in report.students for cell, (_, m) in s.grades.items()}
    for cell, maximum in maxima.items():
        yield "grade_max", cell, "max", maximum
    for cell, count in report.classify_runs.items():
        yield "classify_runs", cell, "students", count
    for t in report.traps:
        key = f"{t.cell} [{t.device}] {t.hint}"
        yield "traps", key, "wrong", len(t.wrong)
        yield "traps", key, "failed", len(t.failed)
    for q in report.specificity:
        yield "specificity", str(q.item), "specific", q.specific
        yield "specificity", str(q.item), "graded", q.graded
        yield "specificity", str(q.item), "fraction", q.fraction
    for s in report.students:
        if s.problems:
            yield "problems", s.student, "problem", "; ".join(s.problems)


def table(report: ClassReport, section: str) -> pd.DataFrame:
    """One section of the CSV as a table: a row per key, a column per measure."""
    long = pd.DataFrame(
        [r[1:] for r in rows(report) if r[0] == section], columns=["key", "measure", "value"]
    )
    wide = long.pivot(index="key", columns="measure", values="value")
    wide = wide.reindex(index=long["key"].unique(), columns=long["measure"].unique())
    wide.columns.name = None
    return wide.rename_axis(section)


def terminal_summary(report: ClassReport) -> str:
    """A few lines for the terminal: what to look at before the next lecture."""
    handed = report.handed_in
    lines = [
        f"{report.assignment}: {len(report.students)} students, {len(handed)} handed in "
        f"(truth measured on {', '.join(report.devices)}, torch {report.torch})",
        f"predictions before looking: {sum(s.passes for s in handed)}/{len(handed)} pass "
        + (f"{PASS_MARK}/20" if report.scoring == CARD else "the balanced 80% line"),
        "lock: " + "; ".join(f"{k} {v}" for k, v in report.lock_counts.items() if v),
    ]
    read = [s for s in handed if s.balanced is not None]
    if read and report.base is not None:
        flagged = [f"{s.student} ({s.flag})" for s in read if s.flag]
        lines.append(
            f"mean right {sum(s.right for s in read) / len(read):.1f}/20, mean balanced "
            f"{sum(s.balanced for s in read) / len(read):.2f}; {report.base.sentence()}; "
            f"no better than that: {', '.join(flagged) or 'none'}"
        )
    memorised = [s.student for s in report.students if s.memorised]
    gaps = [f for f in report.transfer if f.gap is not None and f.gap > 0][:3]
    lines.append(
        f"transfer to the next ops: memorised (twenty pass, next ops below "
        f"{MEMORISED_BELOW:.0%}): {', '.join(memorised) or 'none'}; transfers worst: "
        + (
            "; ".join(f"{f.family} ({f.twenty_share:.0%} -> {f.next_share:.0%})" for f in gaps)
            or "none"
        )
    )
    free = sorted(report.thought_free, key=lambda row: -len(row[2]))[:3]
    lines.append(
        "production lines that ask for a layout copy, thought free most: "
        + ("; ".join(f"{n} {code} ({len(s)} students)" for n, code, s in free if s) or "none")
    )
    families = report.rule_families
    never = [s.student for s in report.students if s.rules_never_held]
    lines.append(
        "rules after, per family (missed items with a rule; tested on the next ops; held there): "
        + (
            "; ".join(
                f"{f} {w}; {t}; " + (f"{held:.0%}" if held is not None else "—")
                for f, (w, t, held) in families.items()
            )
            or "none"
        )
        + f"; rules that never held: {', '.join(never) or 'none'}"
    )
    worst = sorted(report.misconceptions, key=lambda m: -m.wrong)[:5]
    lines.append(
        f"most mispredicted (of {report.judged}): "
        + ("; ".join(f"{m.item} {m.expr} ({m.wrong})" for m in worst if m.wrong) or "none")
    )
    traps = [t for t in report.traps if t.wrong][:5]
    lines.append(
        "classify cases answered wrong most: "
        + ("; ".join(f"{t.hint} [{t.device}] ({len(t.wrong)})" for t in traps) or "none")
    )
    lines.append(
        "specific answers: "
        + ", ".join(f"{q.item}: {q.specific}/{q.graded}" for q in report.specificity)
    )
    if report.problems:
        lines.append("to look at:")
        lines += [f"  {student}: {problem}" for student, problem in report.problems]
    return "\n".join(lines)
