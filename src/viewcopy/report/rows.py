"""The class report as rows: every number of a ClassReport as (section, key, measure, value), the
CSV's rows (report.files writes them), and one section of them as a table."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pandas as pd

from viewcopy.exercise.predictions import VERDICT_CHOICES
from viewcopy.report.numbers import ClassReport

Row = tuple[str, str, str, object]
"""One number of the report: (section, key, measure, value)."""


def rows(report: ClassReport) -> Iterator[Row]:
    """Every number of the report as (section, key, measure, value): the CSV's rows.

    Sections: class (counts, the scoring policy, the base rate, the mean raw and balanced
    scores), rules_after (per family: missed items with a rule, how many met next ops of their
    family, the share they held there; students whose never held), misconceptions (per item),
    lock (per state), production (per copying line of the forward: how many thought it free),
    transfer (per family: right and total on the twenty and on the next ops), student (lock,
    right, balanced, credited_right, passes, flag, next_right, memorised, the release that
    made the lock and the one that graded it (`before versions`: none recorded), the score the
    LMS is given (the push's and the import file's number), totals), grades
    (gradebook score per cell; empty: graded by hand), grade_max, classify_runs, traps (per
    case), specificity (per question), problems; items (per op of the twenty, `item N`, and per
    next op drawn, by id: its part, students, share_right, point_biserial, upper_lower, flag,
    common_wrong and how many said it, and `no_discrimination`: why there is no correlation),
    class kr20 (of the twenty), distribution (per graded part: points, students scored, waiting,
    and students per score bin), similarity (per pair of hand-ins to look at, `first/second`: its
    score and how many passages match).
    """
    for section in SECTIONS:
        yield from section(report)


def _class(report: ClassReport) -> Iterator[Row]:
    key = report.assignment
    yield "class", key, "students", len(report.students)
    yield "class", key, "handed_in", len(report.handed_in)
    yield "class", key, "judged_before_looking", report.judged
    yield "class", key, "passing", sum(s.passes for s in report.students)
    yield "class", key, "scoring", report.scoring
    if report.base is not None:
        yield "class", key, "base_rate_verdict", report.base.verdict
        yield "class", key, "base_rate_right", report.base.count
    read = [s for s in report.students if s.balanced is not None]
    if read:
        yield "class", key, "mean_right", round(sum(s.right for s in read) / len(read), 4)
        mean_balanced = sum(s.balanced for s in read) / len(read)
        yield "class", key, "mean_balanced", round(mean_balanced, 4)
    yield "class", key, "no_better_than_base", sum(bool(s.flag) for s in read)


def _rules_after(report: ClassReport) -> Iterator[Row]:
    for family, rules in report.rule_families.items():
        share = rules.held_share
        yield "rules_after", family, "with_rule", rules.with_rule
        yield "rules_after", family, "tested", rules.tested
        yield "rules_after", family, "held_share", None if share is None else round(share, 4)
    for student in report.students:
        if student.rules_never_held:
            yield "rules_after", student.student, "never_held", True


def _misconceptions(report: ClassReport) -> Iterator[Row]:
    for m in report.misconceptions:
        key = f"{m.item} {m.expr}"
        yield "misconceptions", key, "wrong", m.wrong
        for verdict in VERDICT_CHOICES:
            yield "misconceptions", key, f"said {verdict}", m.said.get(verdict, 0)


def _items(report: ClassReport) -> Iterator[Row]:
    for a in report.items:
        stats, key = a.statistics, a.key
        yield "items", key, "part", a.part
        yield "items", key, "expr", a.expr
        yield "items", key, "students", stats.students
        yield "items", key, "share_right", _rounded(stats.share_right)
        yield "items", key, "point_biserial", _rounded(stats.point_biserial)
        yield "items", key, "upper_lower", _rounded(stats.upper_lower)
        if stats.why:
            yield "items", key, "no_discrimination", stats.why
        yield "items", key, "flag", int(a.flagged)
        yield "items", key, "common_wrong", a.wrong_verdict
        yield "items", key, "common_wrong_students", a.wrong_count
    if report.reliability is not None:
        yield "class", report.assignment, "kr20", _rounded(report.reliability.kr20)
        yield "class", report.assignment, "kr20_students", report.reliability.students
    for d in report.distributions:
        yield "distribution", d.part, "points", d.points
        yield "distribution", d.part, "students", len(d.scores)
        yield "distribution", d.part, "waiting", d.waiting
        for low, high, count in d.bins:
            yield "distribution", d.part, f"{low:g}-{high:g}", count


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _lock_production_transfer(report: ClassReport) -> Iterator[Row]:
    for state, count in report.lock_counts.items():
        yield "lock", state, "students", count
    for row in report.thought_free:
        yield "production", f"{row.line} {row.code}", "thought_free", len(row.students)
    for f in report.transfer:
        yield "transfer", f.family, "twenty_right", f.twenty_right
        yield "transfer", f.family, "twenty_total", f.twenty_total
        yield "transfer", f.family, "next_right", f.next_right
        yield "transfer", f.family, "next_total", f.next_total


def _students(report: ClassReport) -> Iterator[Row]:
    for s in report.students:
        yield "student", s.student, "lock", s.lock
        yield "student", s.student, "right", s.right
        yield "student", s.student, "balanced", None if s.balanced is None else round(s.balanced, 4)
        yield "student", s.student, "credited_right", s.credited
        yield "student", s.student, "passes", int(s.passes)
        yield "student", s.student, "flag", s.flag
        yield "student", s.student, "next_right", s.next_right
        yield "student", s.student, "memorised", int(s.memorised)
        locked, graded = report.versions_said(s.student)
        yield "student", s.student, "lock_version", locked
        yield "student", s.student, "graded_version", graded
        yield "student", s.student, "score", s.given
        if s.grades:
            yield "student", s.student, "auto_total", round(s.auto_total, 4)
            yield "student", s.student, "max_total", s.max_total


def _grades(report: ClassReport) -> Iterator[Row]:
    for s in report.students:
        for cell, (score, _) in s.grades.items():
            yield "grades", s.student, cell, score
    maxima = {cell: m for s in report.students for cell, (_, m) in s.grades.items()}
    for cell, maximum in maxima.items():
        yield "grade_max", cell, "max", maximum


def _classify_and_the_five(report: ClassReport) -> Iterator[Row]:
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


def _problems(report: ClassReport) -> Iterator[Row]:
    for s in report.students:
        if s.problems:
            yield "problems", s.student, "problem", "; ".join(s.problems)


def _similarity(report: ClassReport) -> Iterator[Row]:
    from viewcopy.report.similarity import similarity_rows

    yield from similarity_rows(report.similar or ())


SECTIONS: tuple[Callable[[ClassReport], Iterator[Row]], ...] = (
    _class,
    _rules_after,
    _misconceptions,
    _items,
    _lock_production_transfer,
    _students,
    _grades,
    _classify_and_the_five,
    _problems,
    _similarity,
)
"""The CSV's sections, in its order."""


def table(report: ClassReport, section: str) -> pd.DataFrame:
    """One section of the CSV as a table: a row per key, a column per measure."""
    long = pd.DataFrame(
        [r[1:] for r in rows(report) if r[0] == section], columns=["key", "measure", "value"]
    )
    wide = long.pivot(index="key", columns="measure", values="value")
    wide = wide.reindex(index=long["key"].unique(), columns=long["measure"].unique())
    wide.columns.name = None
    return wide.rename_axis(section)
