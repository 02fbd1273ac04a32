"""The next ops' sheet: this hand-in's ten, the student's predictions and, after `reveal_next`,
the measured verdicts, the evidence, and the diagram of each miss."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from viewcopy.display import units
from viewcopy.display.diagram import Diagram
from viewcopy.display.part_sheet import PartSheet
from viewcopy.display.spreadsheet import evidence_summary
from viewcopy.engine.evidence import Evidence
from viewcopy.exercise.miss_explanation import explained
from viewcopy.exercise.next_ops import NextOp
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.scoring import NEXT_PASS_MARK
from viewcopy.locking.flow import LockStatus


@dataclass(frozen=True, repr=False)
class NextSheet(PartSheet):
    """Predictions for the next ops against measurement (None before `reveal_next`)."""

    ops: tuple[NextOp, ...]
    predictions: Mapping[str, Prediction]
    lock: LockStatus
    evidence: Mapping[str, Evidence] | None = None
    table_name: ClassVar[str] = "the next ops: your predictions and what was measured"

    def right(self) -> dict[str, bool]:
        """Id -> whether the prediction is the measured verdict; empty before the reveal."""
        if self.evidence is None:
            return {}
        return {
            op.id: self.predictions[op.id].verdict == self.evidence[op.id].verdict
            for op in self.ops
        }

    @property
    def frame(self) -> pd.DataFrame:
        right = self.right()
        rows = []
        for op in self.ops:
            prediction = self.predictions[op.id]
            row = {"id": op.id, "family": op.family, "parent": op.parent, "op": op.op,
                   "prediction": prediction.verdict, "rule": prediction.rule}  # fmt: skip
            if self.evidence is not None:
                evidence = self.evidence[op.id]
                row["actual"] = evidence.verdict
                row["correct"] = "yes" if right[op.id] else "no"
                row["evidence"] = evidence_summary(evidence)
                row["in strides"] = "" if right[op.id] else explained(evidence, units.size)
            rows.append(row)
        return pd.DataFrame(rows).set_index("id")

    def headline(self) -> str:
        if self.evidence is None:
            return f"Next predictions locked; actual column hidden. {self.lock.reason}"
        right = sum(self.right().values())
        verdict = "reaches" if right >= NEXT_PASS_MARK else "does not reach"
        return (
            f"{right}/{len(self.ops)} next ops predicted correctly; {verdict} the "
            f"{NEXT_PASS_MARK}/{len(self.ops)} line. {self.lock.reason}"
        )

    @property
    def revealed(self) -> bool:
        return self.evidence is not None

    def below(self) -> str:
        misses = [op for op in self.ops if self.right().get(op.id) is False]
        return "".join(Diagram(self.evidence[op.id]).html() for op in misses)
