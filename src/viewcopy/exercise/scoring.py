"""The grading policy for predictions, applied to measured truth: which predictions are right.

A plain verdict is right when it is what `x` gives on the CPU. `sometimes: <condition>` is right
when the verdict flips under the parent that differs from `x` in only that condition (a variant),
so "sometimes" earns credit only for naming what actually decides it. Only predictions locked
before looking count, and the lab card's acceptance line is 16 of the 20.

That line is also the base rate: measured on `x`, most of the twenty are views, so answering
"view" to all of them reaches it. The lab says so wherever a score is shown, and a course may
credit the twenty by the balanced score instead (the mean, over the verdicts the twenty have on
`x`, of the share of those items predicted right; pass at the same 80%), which a constant sheet
cannot pass. The course chooses with `c.PredictionScoring.policy` in nbgrader_config.py, which
reaches graded kernels and the grader alike as VIEWCOPY_SCORING.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from viewcopy.exercise.part import Prediction
from viewcopy.locking.flow import LockState

if TYPE_CHECKING:  # the policy needs no torch; the truth it is applied to was measured elsewhere
    from viewcopy.exercise.measured import ItemTruth

PASS_MARK = 16
"""Correct predictions, out of 20, needed before looking (lab card, acceptance 1)."""
PASS_SHARE = 0.8
"""The same line as a share: what the balanced score must reach."""
NEXT_PASS_MARK = 8
"""Next ops right, out of 10, for full credit."""
CARD, BALANCED = "card", "balanced"
POLICIES = {
    CARD: f"the lab card's line: full credit from {PASS_MARK}/20 right",
    BALANCED: f"the balanced score: full credit from {PASS_SHARE:.0%} of views and of copies right",
}
POLICY_VARIABLE = "VIEWCOPY_SCORING"


def scoring_policy() -> str:
    """The course's policy for crediting the twenty (VIEWCOPY_SCORING; default: the card's)."""
    policy = os.environ.get(POLICY_VARIABLE, "").strip().lower() or CARD
    if policy not in POLICIES:
        raise ValueError(
            f"{POLICY_VARIABLE}={policy!r} is not a scoring policy; set "
            f"c.PredictionScoring.policy to {' or '.join(map(repr, POLICIES))}"
        )
    return policy


@dataclass(frozen=True)
class BaseRate:
    """What always answering the most frequent verdict on `x` scores, as measured here."""

    verdict: str
    count: int
    total: int

    def sentence(self) -> str:
        return (
            f"{self.count} of the {self.total} are {self.verdict}s here: answering "
            f"'{self.verdict}' to all scores {self.count}/{self.total}"
        )


def base_rate(table: Mapping[int, ItemTruth]) -> BaseRate:
    """The most frequent verdict of the twenty on `x` (CPU), measured."""
    verdict, count = Counter(t.reference for t in table.values()).most_common(1)[0]
    return BaseRate(verdict, count, len(table))


def balanced_share(judged: Mapping[int, bool], table: Mapping[int, ItemTruth]) -> float:
    """The mean, over the verdicts the twenty have on `x`, of the share of them predicted right."""
    by_verdict: dict[str, list[bool]] = {}
    for item, right in judged.items():
        by_verdict.setdefault(table[item].reference, []).append(right)
    return sum(sum(r) / len(r) for r in by_verdict.values()) / len(by_verdict)


def judge_prediction(prediction: Prediction, truth: ItemTruth) -> tuple[bool, str]:
    """Is the prediction right, and why, in one sentence for the student."""
    condition = prediction.condition
    if condition is None:
        right = prediction.verdict == truth.reference
        return right, f"measured {truth.reference} on x (cpu)"
    if condition in truth.flips:
        return True, f"the verdict flips when only the {condition} changes"
    if condition == "device" and len(truth.on_x) == 1:
        return False, "no second device here to flip it; measured " + truth.reference + " on x"
    flipped = f"; it flips only under {', '.join(truth.flips)}" if truth.flips else ""
    return False, f"changing the {condition} does not flip it (measured {truth.reference}){flipped}"


@dataclass(frozen=True)
class Score:
    """The prediction score and whether it counts: only predictions locked before looking do.

    `lock_state` is the sheet's lock state (only `LockState.LOCKED` counts); `balanced` the
    balanced score (0-1); `base` what a constant sheet scores here; `constant` whether the sheet
    gave one verdict to all twenty; `policy` how the course credits them.
    """

    correct: int
    total: int
    lock_state: str
    reason: str
    balanced: float
    base: BaseRate
    constant: bool = False
    policy: str = CARD

    @property
    def counts(self) -> bool:
        return self.lock_state == LockState.LOCKED

    @property
    def share(self) -> float:
        """How far toward full credit the twenty are under the policy (0-1), locked or not."""
        if self.policy == BALANCED:
            return min(self.balanced, PASS_SHARE) / PASS_SHARE
        return min(self.correct, PASS_MARK) / PASS_MARK

    @property
    def passed(self) -> bool:
        return self.counts and self.share >= 1

    @property
    def no_better_than_base(self) -> bool:
        """The sheet scores no more than always giving the most frequent verdict would."""
        return self.constant or self.correct <= self.base.count

    def sentence(self) -> str:
        """The score as the reveal states it: right, the line, the base rate, the lock."""
        verdict = "passes" if self.passed else "does not pass"
        line = (
            f"the {PASS_MARK}/{self.total} line"
            if self.policy == CARD
            else (f"the balanced {PASS_SHARE:.0%} line")
        )
        return (
            f"{self.correct}/{self.total} predicted correctly (balanced score "
            f"{self.balanced:.2f}); {verdict} {line}. {self.base.sentence()}."
            f"{self.warning()} {self.reason}"
        )

    def warning(self) -> str:
        """For a sheet no better than a constant one: say so, and point to the real test."""
        if not self.no_better_than_base:
            return ""
        return (
            f" This sheet is no better than answering '{self.base.verdict}' to all "
            f"{self.total}: the score is the base rate, not knowledge. The next op you have "
            "not seen is the real test of your rules."
        )


def score_sheet(
    parsed: Mapping[int, Prediction],
    table: Mapping[int, ItemTruth],
    lock_state: str = LockState.LOCKED,
    reason: str = "",
    policy: str | None = None,
) -> Score:
    """Score parsed predictions against measured truth, under the course's policy."""
    judged = {item: judge_prediction(p, table[item])[0] for item, p in parsed.items()}
    return Score(
        correct=sum(judged.values()),
        total=len(parsed),
        lock_state=lock_state,
        reason=reason,
        balanced=balanced_share(judged, table),
        base=base_rate(table),
        constant=len({p.verdict for p in parsed.values()}) == 1,
        policy=policy or scoring_policy(),
    )
