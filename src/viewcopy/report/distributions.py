"""Each graded part's scores from the gradebook, and the distribution in words: the text
alternative its figure carries (report.files draws it, report.page shows both)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import median

from viewcopy.exercise.graded_parts import GradedPart, course_parts
from viewcopy.report.numbers import PartDistribution, StudentLine


def part_distributions(
    students: Iterable[StudentLine], declared: Sequence[GradedPart]
) -> tuple[PartDistribution, ...]:
    """Per graded part (as course_parts groups the gradebook's cells, with their maxima), the
    scores of the students all of whose cells in it are scored."""
    graded = [s for s in students if s.grades]
    maxima: dict[str, float] = {}
    for s in graded:
        for cell, (_, maximum) in s.grades.items():
            maxima.setdefault(cell, maximum)
    out = []
    for part in course_parts(maxima, declared) if maxima else ():
        cells = [name for name, _ in part.cells]
        totals = [_part_score(s.grades, cells) for s in graded]
        scores = tuple(t for t in totals if t is not None)
        out.append(PartDistribution(part.name, part.points, scores, len(totals) - len(scores)))
    return tuple(out)


def _part_score(grades: Mapping[str, tuple[float | None, float]], cells: list[str]):
    """The student's score on these cells, None where one of them has no score yet."""
    scores = [grades[cell][0] if cell in grades else None for cell in cells]
    return None if any(s is None for s in scores) else round(sum(scores), 4)


def _number(value: float) -> str:
    return f"{value:g}"


def text_alternative(distribution: PartDistribution) -> str:
    """What the figure shows, in one sentence: the students per score bin."""
    d = distribution
    head = f"{d.part}: scores of {len(d.scores)} student(s), out of {_number(d.points)} points"
    waiting = f"; {d.waiting} still wait for a score" if d.waiting else ""
    if not d.scores:
        return f"{head}: none scored yet{waiting}."
    last = len(d.bins) - 1
    bins = "; ".join(
        f"{_number(low)} to {'' if i == last else 'under '}{_number(high)}: {count}"
        for i, (low, high, count) in enumerate(d.bins)
    )
    return f"{head} (median {_number(median(d.scores))}). Students per score: {bins}{waiting}."
