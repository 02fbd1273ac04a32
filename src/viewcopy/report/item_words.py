"""The item analysis in the words and units a person reads: which ops are most worth a look, and
each number formatted (shares as percentages, correlations to two decimals, and a sentence where
there is no number)."""

from __future__ import annotations

from collections.abc import Iterable

from viewcopy.display.units import share
from viewcopy.report.item_statistics import DISCRIMINATES_BELOW
from viewcopy.report.numbers import ItemAnalysis, Reliability

FLAGGED = (
    "an operation the stronger students miss more: a misleading op or a measurement to look at"
)
"""What a flag on an item means (point-biserial below DISCRIMINATES_BELOW, or negative)."""


def worth_a_look(items: Iterable[ItemAnalysis], count: int = 3) -> tuple[ItemAnalysis, ...]:
    """The `count` items most worth a look: flagged ones first, the most negative discrimination
    first, then the lowest; items without a measured discrimination are left out."""
    measured = [a for a in items if a.statistics.point_biserial is not None]
    ranked = sorted(measured, key=lambda a: (not a.flagged, a.statistics.point_biserial))
    return tuple(ranked[:count])


def correlation(value: float | None) -> str:
    """A correlation to two decimals, with its sign."""
    return "—" if value is None else f"{value:+.2f}"


def discrimination(item: ItemAnalysis) -> str:
    """The point-biserial and what it means, or why there is none."""
    stats = item.statistics
    if stats.point_biserial is None:
        return stats.why
    said = f"point-biserial {correlation(stats.point_biserial)}"
    if stats.point_biserial < 0:
        return f"{said}: stronger students miss it more"
    if stats.point_biserial < DISCRIMINATES_BELOW:
        return f"{said}: barely separates stronger students from weaker ones"
    return said


def share_right(item: ItemAnalysis) -> str:
    stats = item.statistics
    return f"{share(stats.share_right)} of {stats.students}" if stats.students else "no students"


def common_wrong(item: ItemAnalysis) -> str:
    if not item.wrong_count:
        return "none wrong"
    return f"{item.wrong_verdict} ({item.wrong_count})"


def reliability(found: Reliability | None) -> str:
    """KR-20 of the twenty in a sentence."""
    if found is None or found.kr20 is None:
        students = found.students if found else 0
        return f"KR-20 of the twenty: too few students or no spread to say ({students} judged)"
    return f"KR-20 of the twenty: {found.kr20:.2f} over {found.students} students judged"


def worth_a_look_line(items: Iterable[ItemAnalysis]) -> str:
    """The terminal's line: the three items most worth a look."""
    shown = [f"{a.label} ({discrimination(a)})" for a in worth_a_look(items)]
    return "worth a look: " + ("; ".join(shown) or "none (too few students to measure)")
