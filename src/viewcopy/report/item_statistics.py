"""Classical item analysis over a 0/1 matrix: numpy only, no course, no torch.

The matrix has one row per student and one column per item: 1 right, 0 wrong, NaN where the
student did not answer the item (a next op they did not draw). Every statistic of an item is over
the students who answered it, and an item's discrimination is measured against the REST of the
part (the student's total over the items they answered, minus this item), so an item never
correlates with itself.

- share right: the mean of its column;
- point-biserial: the Pearson correlation of its column with the rest score;
- upper-lower: the share right among the top 27% by rest score minus among the bottom 27%; a
  tie at the boundary is weighted in part (each tied student counts by the share of the group
  still to fill), which is what a random tie-break gives on average, so the value does not
  depend on the students' order;
- KR-20: the reliability of a part every student answered in full.

Population moments (ddof 0) throughout, so KR-20 equals Cronbach's alpha of the same matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FEWEST = 5
"""Fewer students than this on an item: no correlation and no upper-lower (too few to say)."""
TAIL = 0.27
"""The upper and lower groups' share of the students (Kelley's 27%)."""
DISCRIMINATES_BELOW = 0.2
"""An item whose point-biserial falls below this is flagged: it barely separates stronger
students from weaker ones, or the stronger ones miss it more."""


@dataclass(frozen=True)
class ItemStatistics:
    """One item's numbers: who answered it, how many right, its discrimination (None when it
    cannot be measured, `why` saying why)."""

    students: int
    right: int
    point_biserial: float | None
    upper_lower: float | None
    why: str = ""

    @property
    def share_right(self) -> float | None:
        return self.right / self.students if self.students else None

    @property
    def flagged(self) -> bool:
        """Discriminates below DISCRIMINATES_BELOW, or negatively."""
        return self.point_biserial is not None and self.point_biserial < DISCRIMINATES_BELOW


def item_statistics(matrix: np.ndarray) -> tuple[ItemStatistics, ...]:
    """Every column's statistics (see the module's docstring)."""
    matrix = np.asarray(matrix, dtype=float)
    answered = ~np.isnan(matrix)
    correlations = point_biserial(matrix)
    differences = upper_lower(matrix)
    out = []
    for i in range(matrix.shape[1]):
        n, right = int(answered[:, i].sum()), int(np.nansum(matrix[:, i]))
        why = _why(n, right, rest_varies=not np.isnan(correlations[i]))
        if why:
            out.append(ItemStatistics(n, right, None, None, why))
        else:
            out.append(ItemStatistics(n, right, float(correlations[i]), float(differences[i])))
    return tuple(out)


def _why(students: int, right: int, rest_varies: bool) -> str:
    """Why an item's discrimination cannot be measured ("" when it can)."""
    if students < FEWEST:
        return f"only {students} student{'s' if students != 1 else ''}: too few to correlate"
    if right in (0, students):
        said = "everyone" if right else "no one"
        return f"{said} got it right: no variance to correlate"
    if not rest_varies:
        return "every student has the same rest score: nothing to correlate with"
    return ""


def rest_scores(matrix: np.ndarray) -> np.ndarray:
    """Per student and item, the student's total over the items answered minus this item (NaN
    where the item was not answered)."""
    matrix = np.asarray(matrix, dtype=float)
    totals = np.nansum(matrix, axis=1, keepdims=True)
    return totals - matrix


def point_biserial(matrix: np.ndarray) -> np.ndarray:
    """Per item, the correlation of right (0/1) with the rest score over the students who
    answered it; NaN where either does not vary or fewer than FEWEST answered."""
    matrix = np.asarray(matrix, dtype=float)
    answered = ~np.isnan(matrix)
    n = answered.sum(axis=0)
    x = np.where(answered, matrix, 0.0)
    rest = np.where(answered, rest_scores(matrix), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        x_centred = np.where(answered, x - x.sum(axis=0) / n, 0.0)
        rest_centred = np.where(answered, rest - rest.sum(axis=0) / n, 0.0)
        covariance = (x_centred * rest_centred).sum(axis=0)
        spread = np.sqrt((x_centred**2).sum(axis=0) * (rest_centred**2).sum(axis=0))
        r = covariance / spread
    r[(n < FEWEST) | ~(spread > 1e-12)] = np.nan
    return r


def upper_lower(matrix: np.ndarray, tail: float = TAIL) -> np.ndarray:
    """Per item, the share right in the top `tail` of its students by rest score minus the
    share in the bottom `tail` (ties at a boundary weighted in part); NaN under FEWEST."""
    matrix = np.asarray(matrix, dtype=float)
    rest = rest_scores(matrix)
    out = np.full(matrix.shape[1], np.nan)
    for i in range(matrix.shape[1]):  # per item, vectorised over its students
        answered = ~np.isnan(matrix[:, i])
        if answered.sum() < FEWEST:
            continue
        right, scores = matrix[answered, i], rest[answered, i]
        out[i] = _tail_share(right, scores, tail) - _tail_share(right, -scores, tail)
    return out


def _tail_share(right: np.ndarray, scores: np.ndarray, tail: float) -> float:
    """The share right among the top `tail` of students by `scores`, a tied boundary group
    counted in part so that the weights sum to exactly tail * n."""
    size = tail * len(scores)
    ordered = np.sort(scores)
    above = len(scores) - np.searchsorted(ordered, scores, side="right")
    tied = np.searchsorted(ordered, scores, side="right") - np.searchsorted(ordered, scores)
    weights = np.clip((size - above) / tied, 0.0, 1.0)
    return float((weights * right).sum() / weights.sum())


def kr20(matrix: np.ndarray) -> float | None:
    """Kuder-Richardson 20 of a part every student answered in full (rows with a NaN are left
    out); None with fewer than FEWEST students, under two items, or totals that do not vary."""
    matrix = np.asarray(matrix, dtype=float)
    matrix = matrix[~np.isnan(matrix).any(axis=1)]
    students, items = matrix.shape
    if students < FEWEST or items < 2:
        return None
    total_variance = matrix.sum(axis=1).var()
    if total_variance <= 1e-12:
        return None
    p = matrix.mean(axis=0)
    return float(items / (items - 1) * (1 - (p * (1 - p)).sum() / total_variance))
