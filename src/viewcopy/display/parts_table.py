"""The graded parts as a table: each part's cells, what it asks, its minutes and points (the
master's, as `exercise.graded_parts.course_parts` gives them), the totals and, for a hand-in, what
it earned in each. The opening cell (`lab.parts()`) and the feedback show it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pandas as pd

from viewcopy.exercise.graded_parts import GRADED_PARTS, GradedPart, course_parts


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
    scores: Mapping[str, float | None] | None = None,
    points: Mapping[str, float] | None = None,
    declared: Sequence[GradedPart] = GRADED_PARTS,
) -> pd.DataFrame:
    """The graded parts (`course_parts(points, declared)`): their cells, what each asks, its
    minutes and points, and the totals; with `scores` (grade id -> score, None while graded by
    hand), what this hand-in earned."""
    parts = course_parts(points, declared)
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
