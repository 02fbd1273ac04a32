"""The lab's graded parts: which graded cells make each part, what it asks and a time budget that
adds up to the lab card's 75 minutes, declared once; the points are the master's.

The shipped master's points are declared here too (a test holds them to its nbgrader `points`),
but a course's own master decides: `course_parts(points)` takes each cell's points from the
master's metadata (the release's opening cell and the feedback pass them), leaves out a cell the
master lacks and a part left with none (a stretch removed), and shows a graded cell no part
declares under "other graded cells", so the table's total is always the master's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

CARD_MINUTES = 75
"""The lab card's length of the lab (docs/lab_card.txt: "M01.02·Accounting·Core·75 minutes")."""


@dataclass(frozen=True)
class GradedPart:
    """One graded part of the notebook: its graded cells (grade id -> points, in notebook order),
    what the student does, the minutes it is budgeted, and whether it is the stretch."""

    name: str
    cells: tuple[tuple[str, float], ...]
    what: str
    minutes: int
    stretch: bool = False

    @property
    def points(self) -> float:
        return sum(points for _, points in self.cells)


GRADED_PARTS = (
    GradedPart(
        "predictions",
        (("score_predictions", 5),),
        "the twenty, each a verdict and its rule, locked before the reveal (full credit from "
        "16/20 right before looking, or as the course's policy says)",
        20,
    ),
    GradedPart(
        "rules after",
        (("check_rules_after", 2),),
        "for every item you missed, the rule that would have saved it",
        5,
    ),
    GradedPart(
        "next ops",
        (("score_next", 4),),
        "ten ops you have not seen, predicted with your rules, locked, revealed (full credit "
        "from 8/10 right before looking)",
        10,
    ),
    GradedPart(
        "the dangerous five",
        tuple(c for n in range(21, 26) for c in ((f"answer_{n}", 2), (f"specific_{n}", 1))),
        "questions 21-25, one or two sentences each (graded by hand, plus a specificity check), "
        "then what question 25's copies cost, measured",
        20,
    ),
    GradedPart(
        "production",
        (("score_production", 2),),
        "which lines of a small vision transformer's forward copy, locked before the profile",
        10,
    ),
    GradedPart(
        "classify",
        (("test_classify_visible", 3), ("test_classify_hidden", 5)),
        "classify(op_result, parent) by storage: the twenty, then hidden trap cases",
        10,
        stretch=True,
    ),
)
"""The graded parts in notebook order, with the shipped master's points."""
OTHER = "other graded cells"


def shipped_points() -> dict[str, float]:
    """Grade id -> points of every graded cell, as the shipped master has them."""
    return {name: points for part in GRADED_PARTS for name, points in part.cells}


def course_parts(points: Mapping[str, float] | None = None) -> tuple[GradedPart, ...]:
    """The graded parts as a course's master has them (`points`: grade id -> its nbgrader points,
    in notebook order); the shipped parts without it."""
    if points is None:
        return GRADED_PARTS
    parts = []
    for part in GRADED_PARTS:
        cells = tuple((name, points[name]) for name, _ in part.cells if name in points)
        if cells:
            parts.append(replace(part, cells=cells))
    declared = set(shipped_points())
    others = tuple((name, p) for name, p in points.items() if name not in declared)
    if others:
        parts.append(GradedPart(OTHER, others, "graded cells of this course's own", 0))
    return tuple(parts)


def cells_label(cells: tuple[tuple[str, float], ...]) -> str:
    """The graded cells as a reader scans them: `answer_21-25 (2 each)` for a numbered run."""
    if len(cells) == 1:
        return cells[0][0]
    runs: dict[tuple[str, float], list[str]] = {}
    for name, points in cells:
        match = re.fullmatch(r"(.+)_(\d+)", name)
        key = (match.group(1), points) if match else (name, points)
        runs.setdefault(key, []).append(match.group(2) if match else "")
    labels = []
    for (stem, points), numbers in runs.items():
        if len(numbers) > 1:
            labels.append(f"{stem}_{numbers[0]}-{numbers[-1]} ({points:g} each)")
        else:
            labels.append(f"{stem}{'_' + numbers[0] if numbers[0] else ''} ({points:g})")
    return ", ".join(labels)


def parts_frame(
    scores: Mapping[str, float | None] | None = None, points: Mapping[str, float] | None = None
) -> pd.DataFrame:
    """The graded parts (`course_parts(points)`): their cells, what each asks, its minutes and
    points, and the totals; with `scores` (grade id -> score, None while graded by hand), what
    this hand-in earned."""
    parts = course_parts(points)
    total = sum(p.points for p in parts)
    rows = []
    for part in parts:
        name = f"{part.name} (stretch)" if part.stretch else part.name
        what = f"{part.what}; {stretch_counts(part, total)}" if part.stretch else part.what
        rows.append([name, cells_label(part.cells), what, part.minutes, part.points])
    rows.append(["total", "", "", sum(p.minutes for p in parts), total])
    frame = pd.DataFrame(rows, columns=["part", "graded cells", "what you do", "minutes", "points"])
    if scores is not None:
        every = tuple(cell for part in parts for cell in part.cells)
        frame["your score"] = [
            *(earned(p.cells, scores) for p in parts),
            earned(every, scores),
        ]
    return frame.set_index("part")


def stretch_counts(part: GradedPart, total: float) -> str:
    """Whether the stretch counts: its points are part of the total, so leaving it out caps it."""
    return (
        f"the stretch counts: its {part.points:g} points are part of the {total:g}, so without "
        f"it the most is {total - part.points:g}"
    )


def earned(cells: tuple[tuple[str, float], ...], scores: Mapping[str, float | None]) -> str:
    """What these cells earned, `3.5`, or `3.5 + by hand` while some are still graded by hand."""
    known = [scores[name] for name, _ in cells if scores.get(name) is not None]
    pending = any(scores.get(name) is None for name, _ in cells)
    total = f"{sum(known):g}" if known else "0"
    return f"{total} + by hand" if pending else total
