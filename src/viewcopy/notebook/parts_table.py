"""The lab's graded parts, declared once: which graded cells make each part, their points, and a
time budget that adds up to the lab card's 75 minutes; the notebook's opening table is built from
this declaration, and a test holds it to the master's graded cells (their nbgrader `points`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

CARD_MINUTES = 75
"""The lab card's length of the lab (docs/lab_card.txt: "M01.02·Accounting·Core·75 minutes")."""


@dataclass(frozen=True)
class GradedPart:
    """One graded part of the notebook: its graded cells (grade id -> points, in notebook order),
    what the student does, the minutes it is budgeted, and whether it is the stretch."""

    name: str
    cells: tuple[tuple[str, int], ...]
    what: str
    minutes: int
    stretch: bool = False

    @property
    def points(self) -> int:
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
"""The graded parts in notebook order."""


def cells_label(cells: tuple[tuple[str, int], ...]) -> str:
    """The graded cells as a reader scans them: `answer_21-25 (2 each)` for a numbered run."""
    if len(cells) == 1:
        return cells[0][0]
    runs: dict[tuple[str, int], list[str]] = {}
    for name, points in cells:
        match = re.fullmatch(r"(.+)_(\d+)", name)
        key = (match.group(1), points) if match else (name, points)
        runs.setdefault(key, []).append(match.group(2) if match else "")
    labels = []
    for (stem, points), numbers in runs.items():
        if len(numbers) > 1:
            labels.append(f"{stem}_{numbers[0]}-{numbers[-1]} ({points} each)")
        else:
            labels.append(f"{stem}{'_' + numbers[0] if numbers[0] else ''} ({points})")
    return ", ".join(labels)


def parts_frame(scores: Mapping[str, float | None] | None = None) -> pd.DataFrame:
    """The graded parts: their cells, what each asks, its minutes and points, and the totals;
    with `scores` (grade id -> score, None while graded by hand), what this hand-in earned."""
    total = sum(p.points for p in GRADED_PARTS)
    rows = []
    for part in GRADED_PARTS:
        name = f"{part.name} (stretch)" if part.stretch else part.name
        what = f"{part.what}; {stretch_counts(part, total)}" if part.stretch else part.what
        rows.append([name, cells_label(part.cells), what, part.minutes, part.points])
    rows.append(["total", "", "", sum(p.minutes for p in GRADED_PARTS), total])
    frame = pd.DataFrame(rows, columns=["part", "graded cells", "what you do", "minutes", "points"])
    if scores is not None:
        every = tuple(cell for part in GRADED_PARTS for cell in part.cells)
        frame["your score"] = [
            *(earned(p.cells, scores) for p in GRADED_PARTS),
            earned(every, scores),
        ]
    return frame.set_index("part")


def stretch_counts(part: GradedPart, total: int) -> str:
    """Whether the stretch counts: its points are part of the total, so leaving it out caps it."""
    return (
        f"the stretch counts: its {part.points} points are part of the {total}, so without it "
        f"the most is {total - part.points}"
    )


def earned(cells: tuple[tuple[str, int], ...], scores: Mapping[str, float | None]) -> str:
    """What these cells earned, `3.5`, or `3.5 + by hand` while some are still graded by hand."""
    known = [scores[name] for name, _ in cells if scores.get(name) is not None]
    pending = any(scores.get(name) is None for name, _ in cells)
    total = f"{sum(known):g}" if known else "0"
    return f"{total} + by hand" if pending else total
