"""The lab's graded parts: which graded cells make each part, what it asks, the minutes it is
budgeted and whether it is the stretch. The points are always the master's (its cells' nbgrader
metadata); the parts are the shipped ones (`GRADED_PARTS`) unless the course declares its own
(`c.CourseDeclaration.parts` in its nbgrader_config.py, read by `declared_parts`).

`course_parts(points, declared)` is what every table shows: each part's cells with the master's
points, a cell the master lacks left out, a part left with none dropped (a stretch removed), and a
graded cell no part holds shown under "other graded cells", so the total is always the master's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

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

    def declaration(self) -> dict[str, object]:
        """The part as a course declares it (points left to the master's metadata)."""
        entry: dict[str, object] = {
            "name": self.name,
            "cells": [name for name, _ in self.cells],
            "what": self.what,
            "minutes": self.minutes,
        }
        return {**entry, "stretch": True} if self.stretch else entry


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
"""The shipped graded parts in notebook order, with the shipped master's points."""
OTHER = "other graded cells"
PART_KEYS = {"name": str, "cells": list, "what": str, "minutes": int, "stretch": bool}
"""What a declared part holds, and of which type (`stretch` may be left out: False)."""
KINDS = {str: "text", list: "a list", int: "a whole number", bool: "True or False"}


class DeclarationError(ValueError):
    """A course's declaration of its parts or next ops that cannot be used: the message names the
    entry and the fix."""


def shipped_points() -> dict[str, float]:
    """Grade id -> points of every graded cell, as the shipped master has them."""
    return {name: points for part in GRADED_PARTS for name, points in part.cells}


def declared_parts(entries: Sequence[Mapping[str, object]]) -> tuple[GradedPart, ...]:
    """The parts a course declares (a list of {"name", "cells", "what", "minutes", "stretch"}),
    in its order, their points 0 until the master's are given; the shipped parts for none.
    DeclarationError names the first entry that is not one, and why."""
    if not entries:
        return GRADED_PARTS
    parts, held = [], {}
    for index, entry in enumerate(entries):
        where = f"part {index + 1}" + (
            f" ({entry['name']!r})" if isinstance(entry, Mapping) and "name" in entry else ""
        )
        part = _part(entry, where)
        for name, _ in part.cells:
            if name in held:
                raise DeclarationError(
                    f"{where}: cell {name!r} is already in part {held[name]!r}; a graded cell "
                    "belongs to one part"
                )
            held[name] = part.name
        if part.name in {p.name for p in parts}:
            raise DeclarationError(f"{where}: another part has that name; give each its own")
        parts.append(part)
    return tuple(parts)


def _part(entry: object, where: str) -> GradedPart:
    if not isinstance(entry, Mapping):
        raise DeclarationError(f"{where} is a {type(entry).__name__}, not a dict of {_keys()}")
    unknown = sorted(set(entry) - set(PART_KEYS))
    missing = sorted(set(PART_KEYS) - set(entry) - {"stretch"})
    if unknown or missing:
        said = [
            f"{what} {', '.join(keys)}"
            for what, keys in (("unknown", unknown), ("missing", missing))
            if keys
        ]
        raise DeclarationError(f"{where}: {'; '.join(said)}; a part holds {_keys()}")
    for key, kind in PART_KEYS.items():
        value = entry.get(key, False)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise DeclarationError(f"{where}: {key} is {value!r}; it must be {KINDS[kind]}")
    cells = entry["cells"]
    if not cells or not all(isinstance(name, str) and name for name in cells):
        raise DeclarationError(f"{where}: cells must list the grade ids of its graded cells")
    if entry["minutes"] < 0:
        raise DeclarationError(f"{where}: minutes is {entry['minutes']}, not 0 or more")
    return GradedPart(
        entry["name"],
        tuple((name, 0.0) for name in cells),
        entry["what"],
        entry["minutes"],
        bool(entry.get("stretch", False)),
    )


def _keys() -> str:
    return "name, cells (grade ids), what, minutes and, for the stretch, stretch: True"


def course_parts(
    points: Mapping[str, float] | None = None, declared: Sequence[GradedPart] = GRADED_PARTS
) -> tuple[GradedPart, ...]:
    """The graded parts (`declared`: the shipped ones unless the course declares its own) as a
    course's master has them (`points`: grade id -> its nbgrader points, in notebook order); the
    shipped master's points without it."""
    if points is None:
        points = shipped_points()
    parts = []
    for part in declared:
        cells = tuple((name, points[name]) for name, _ in part.cells if name in points)
        if cells:
            parts.append(replace(part, cells=cells))
    held = {name for part in declared for name, _ in part.cells}
    others = tuple((name, p) for name, p in points.items() if name not in held)
    if others:
        parts.append(GradedPart(OTHER, others, "graded cells of this course's own", 0))
    return tuple(parts)
