"""The grading policy of DESIGN §3 applied to measured evidence: which predictions are right."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from viewcopy.catalogue import ITEMS, VARIANTS
from viewcopy.evidence import Evidence
from viewcopy.predictions import Prediction

PASS_MARK = 16
"""Correct predictions, out of 20, needed before looking (lab card, acceptance 1)."""


@dataclass(frozen=True)
class Truth:
    """What measurement says about one item: its verdict on `x` per device, and what flips it."""

    item: int
    on_x: Mapping[str, str]
    flips: tuple[str, ...]
    evidence: Mapping[tuple[str, str], Evidence]

    @property
    def reference(self) -> str:
        """The verdict on `x` on the CPU, which every machine has."""
        return self.on_x["cpu"]


def truth_table(evidence: Iterable[Evidence]) -> dict[int, Truth]:
    """Group measured evidence (from measure_catalogue) into one Truth per item."""
    found: dict[int, dict[tuple[str, str], Evidence]] = {i: {} for i in ITEMS}
    for e in evidence:
        found[e.item][(e.parent, e.device)] = e
    return {item: _truth(item, by_key) for item, by_key in found.items()}


def _truth(item: int, by_key: Mapping[tuple[str, str], Evidence]) -> Truth:
    devices = [device for parent, device in by_key if parent == "x"]
    on_x = {d: by_key[("x", d)].verdict for d in devices}
    flips = []
    for variant in VARIANTS:
        if any(
            (variant.name, d) in by_key and by_key[(variant.name, d)].verdict != on_x[d]
            for d in devices
        ):
            flips.append(variant.condition)
    if len(set(on_x.values())) > 1:
        flips.append("device")
    return Truth(item, on_x, tuple(flips), dict(by_key))


def judge(prediction: Prediction, truth: Truth) -> tuple[bool, str]:
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

    def summary(self) -> str:
        verdict = "passes" if self.passed else "does not pass"
        return (
            f"{self.correct}/{self.total} predicted correctly; {verdict} the "
            f"{PASS_MARK}/{self.total} line. {self.reason}"
        )
