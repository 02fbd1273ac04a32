"""The twenty as a part: PREDICTIONS, one (verdict, rule) for each item 1-20, locked by
`lab.lock` and revealed by `lab.reveal`. A verdict is `view`, `copy` or `sometimes: <condition>`
(right when that condition's variant parent flips it: exercise.scoring)."""

from __future__ import annotations

from viewcopy.exercise.catalogue import CONDITIONS, ITEMS
from viewcopy.exercise.part import Part, Prediction
from viewcopy.locking.record import TWENTY as KEY

VERDICT_CHOICES: tuple[str, ...] = ("view", "copy", *(f"sometimes: {c}" for c in CONDITIONS))

TWENTY = Part(
    key=KEY,
    label="PREDICTIONS",
    noun="item",
    lock_call="lock",
    cell="predictions",
    argument="predictions",
    choices=VERDICT_CHOICES,
    with_rule=True,
    example="1: ('view', 'slicing keeps storage; offset moves')",
    keys=lambda record: ITEMS,
)


def parse_predictions(value: object) -> dict[int, Prediction]:
    """PREDICTIONS validated and normalized, or one PredictionError naming every problem."""
    return TWENTY.parse(value, ITEMS)
