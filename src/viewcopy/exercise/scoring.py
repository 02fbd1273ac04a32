"""The grading policy for predictions, applied to measured truth: which predictions are right.

A plain verdict is right when it is what `x` gives on the CPU. `sometimes: <condition>` is right
when the verdict flips under the parent that differs from `x` in only that condition (a variant),
so "sometimes" earns credit only for naming what actually decides it. Only predictions locked
before looking count, and the lab card's acceptance line is 16 of the 20.
"""

from __future__ import annotations

from dataclasses import dataclass

from viewcopy.exercise.measured import ItemTruth
from viewcopy.exercise.predictions import Prediction

PASS_MARK = 16
"""Correct predictions, out of 20, needed before looking (lab card, acceptance 1)."""


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
    """The prediction score and whether it counts: only predictions locked before looking do."""

    correct: int
    total: int
    lock_state: str
    reason: str

    @property
    def counts(self) -> bool:
        return self.lock_state == "locked"

    @property
    def passed(self) -> bool:
        return self.counts and self.correct >= PASS_MARK

    def sentence(self) -> str:
        """The score as the reveal states it: right, the pass line, and the lock's reason."""
        verdict = "passes" if self.passed else "does not pass"
        return (
            f"{self.correct}/{self.total} predicted correctly; {verdict} the "
            f"{PASS_MARK}/{self.total} line. {self.reason}"
        )
