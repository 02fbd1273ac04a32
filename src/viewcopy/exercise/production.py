"""The production model as a part: PRODUCTION, "copy" or "no copy" for every listed line of the
model's forward (exercise.production_model), locked by `lab.lock_production` after the twenty
are revealed, and revealed by `lab.profile_production`, which charges every copy kernel to its
line."""

from __future__ import annotations

from viewcopy.exercise.part import Part
from viewcopy.locking.record import LockRecord


def listed_lines(record: LockRecord | None = None) -> list[int]:
    """The numbers of the forward's listed lines (the model needs torch: imported here)."""
    from viewcopy.exercise.production_model import forward_listing

    return [number for number, _ in forward_listing()]


PRODUCTION = Part(
    key="production",
    label="PRODUCTION",
    noun="line",
    lock_call="lock_production",
    cell="production_predictions",
    argument="production",
    choices=("copy", "no copy"),
    with_rule=False,
    example="1: 'no copy'",
    keys=listed_lines,
)
