"""Item analysis recovers what a class drawn from a known model must give.

A class of 4000 students is drawn from a two-parameter logistic IRT model with known items: ability
θ ~ N(0, 1), P(right) = 1 / (1 + exp(-a (θ - b))), one item with a < 0 (the stronger miss it
more) and one with a = 0 (chance, whatever the ability). Every expected value is computed without
the module under test: shares by integrating over θ, the upper-lower difference by a far larger
draw with its own random tie-break, KR-20 as Cronbach's alpha of the covariance matrix and of the
model's own covariances, the point-biserial by scipy.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from viewcopy.report.item_statistics import (
    FEWEST,
    item_statistics,
    kr20,
    point_biserial,
    rest_scores,
    upper_lower,
)

A = np.array([-1.0, 0.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7,
              1.8, 1.9, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.8])  # fmt: skip
B = np.array([0.0, 0.3, -0.2, 0.4, -0.6, 0.1, 0.8, -0.9, 0.2, -0.3,
              0.5, -0.1, 0.0, 0.6, -0.5, 0.3, -0.7, 0.1, 0.4, -0.2])  # fmt: skip
NEGATIVE, CHANCE = 0, 1
STUDENTS = 4000
THETA = np.linspace(-8, 8, 8001)
DENSITY = stats.norm.pdf(THETA)


def probabilities(theta: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-A * (theta[:, None] - B)))


def draw_class(students: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(students)
    return (rng.random((students, len(A))) < probabilities(theta)).astype(float)


@pytest.fixture(scope="module")
def drawn() -> np.ndarray:
    return draw_class(STUDENTS, seed=20240611)


def expectation(values: np.ndarray) -> np.ndarray:
    """E over θ ~ N(0, 1) of `values` (one row per θ of the grid), by the trapezoid rule."""
    return np.trapezoid(values * DENSITY.reshape(-1, *[1] * (values.ndim - 1)), THETA, axis=0)


def test_the_share_right_is_the_model_s_expected_share(drawn):
    expected = expectation(probabilities(THETA))
    shares = np.array([s.share_right for s in item_statistics(drawn)])
    assert np.abs(shares - expected).max() < 0.03


def test_the_point_biserial_is_scipy_s_on_the_same_rest_scores(drawn):
    rest = drawn.sum(axis=1, keepdims=True) - drawn  # computed here, not by rest_scores
    expected = [stats.pointbiserialr(drawn[:, i], rest[:, i]).statistic for i in range(len(A))]
    assert point_biserial(drawn) == pytest.approx(expected, abs=1e-12)
    assert rest_scores(drawn) == pytest.approx(rest)


def test_the_point_biserial_follows_the_discrimination_and_flags_the_misleading_items(drawn):
    found = item_statistics(drawn)
    correlations = np.array([s.point_biserial for s in found])
    assert correlations[NEGATIVE] < -0.1, "the stronger students miss it more"
    assert abs(correlations[CHANCE]) < 0.06
    assert stats.spearmanr(A, correlations).statistic > 0.9
    assert {i for i, s in enumerate(found) if s.flagged} == {NEGATIVE, CHANCE}
    assert correlations[2:].min() > 0.3


def model_upper_lower(students: int = 200_000, tail: float = 0.27) -> np.ndarray:
    """The upper-lower difference of a far larger draw, each tie at a boundary broken at
    random (what the module's part-weighted ties give on average)."""
    big = draw_class(students, seed=7)
    rest = big.sum(axis=1, keepdims=True) - big
    rng = np.random.default_rng(8)
    size = round(tail * students)
    out = []
    for i in range(len(A)):
        order = np.lexsort((rng.random(students), rest[:, i]))  # by rest, ties at random
        out.append(big[order[-size:], i].mean() - big[order[:size], i].mean())
    return np.array(out)


def test_the_upper_lower_difference_is_the_model_s(drawn):
    found = np.array([s.upper_lower for s in item_statistics(drawn)])
    expected = model_upper_lower()
    assert np.abs(found - expected).max() < 0.06
    assert found[NEGATIVE] < -0.1 and abs(found[CHANCE]) < 0.06


def test_ties_at_the_boundary_count_in_part_so_the_order_of_students_does_not_matter(drawn):
    shuffled = drawn[np.random.default_rng(3).permutation(STUDENTS)]
    assert upper_lower(shuffled) == pytest.approx(upper_lower(drawn), abs=1e-12)
    one = np.array([[1, 1], [1, 1], [0, 1], [1, 0], [0, 0], [0, 0]], dtype=float)
    # item 0's rest scores 1, 1, 1, 0, 0, 0: the top 27% (1.62 students) are 1.62 of the three
    # tied at 1, two of which are right; the bottom 1.62 of the three at 0, one right
    assert upper_lower(one)[0] == pytest.approx(2 / 3 - 1 / 3)


def cronbach_alpha(covariance: np.ndarray) -> float:
    items = len(covariance)
    return items / (items - 1) * (1 - np.trace(covariance) / covariance.sum())


def test_kr20_is_cronbach_s_alpha_and_near_the_model_s_reliability(drawn):
    found = kr20(drawn)
    assert found == pytest.approx(cronbach_alpha(np.cov(drawn.T, bias=True)), abs=1e-9)
    p = probabilities(THETA)
    shares = expectation(p)
    joint = expectation(p[:, :, None] * p[:, None, :])
    model = joint - np.outer(shares, shares)
    np.fill_diagonal(model, shares * (1 - shares))
    assert found == pytest.approx(cronbach_alpha(model), abs=0.02)
    true_variance = expectation(p.sum(axis=1) ** 2) - expectation(p.sum(axis=1)) ** 2
    error_variance = expectation((p * (1 - p)).sum(axis=1))
    reliability = true_variance / (true_variance + error_variance)
    assert reliability - 0.08 < found < reliability + 0.02  # alpha is a lower bound


def test_an_item_everyone_gets_right_has_no_correlation_and_says_why(drawn):
    matrix = drawn[:50].copy()
    matrix[:, 3] = 1
    matrix[:, 4] = 0
    found = item_statistics(matrix)
    assert found[3].point_biserial is None and found[3].upper_lower is None
    assert found[3].why == "everyone got it right: no variance to correlate"
    assert found[4].why == "no one got it right: no variance to correlate"
    assert found[3].share_right == 1 and not found[3].flagged
    assert found[5].point_biserial is not None and found[5].why == ""


def test_a_handful_of_students_is_too_few_to_say(drawn):
    few = drawn[: FEWEST - 1]
    assert all(s.point_biserial is None for s in item_statistics(few))
    assert item_statistics(few)[0].why == f"only {FEWEST - 1} students: too few to correlate"
    assert kr20(few) is None and kr20(np.ones((10, 5))) is None
    assert item_statistics(np.empty((0, 3)))[0].share_right is None


def test_an_op_only_some_students_drew_is_measured_over_them(drawn):
    rng = np.random.default_rng(5)
    matrix = drawn[:600].copy()
    matrix[rng.random(matrix.shape) < 0.5] = np.nan  # half the ops, drawn per student
    found = item_statistics(matrix)
    for i in (0, 7, 19):
        drew = ~np.isnan(matrix[:, i])
        rest = np.nansum(matrix[drew], axis=1) - matrix[drew, i]
        assert found[i].students == drew.sum()
        assert found[i].share_right == pytest.approx(matrix[drew, i].mean())
        expected = stats.pointbiserialr(matrix[drew, i], rest).statistic
        assert found[i].point_biserial == pytest.approx(expected, abs=1e-12)
