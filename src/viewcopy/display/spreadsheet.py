"""The lab's spreadsheet: prediction, rule, the measured actual, right or wrong, the score."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from viewcopy.display import units
from viewcopy.display.part_sheet import PartSheet
from viewcopy.engine.evidence import Evidence
from viewcopy.exercise.catalogue import OPS
from viewcopy.exercise.measured import ItemTruth
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.scoring import Score, judge_prediction, score_sheet
from viewcopy.locking.flow import LockStatus

HIDDEN = "hidden until the reveal"


def evidence_summary(evidence: Evidence) -> str:
    """One line of the evidence that decided a verdict."""
    if evidence.verdict == "error":
        return f"PyTorch refused: {evidence.message}"
    kernels = f"; {', '.join(evidence.copy_kernels)}" if evidence.copy_kernels else ""
    if evidence.verdict == "view":
        what = "the same object" if evidence.same_object else "same storage"
        return (
            f"{what}, offset {evidence.storage_offset}, strides {tuple(evidence.stride)}, "
            f"{evidence.bytes_allocated} B new{kernels}"
        )
    return f"new storage, {evidence.bytes_allocated} B allocated{kernels}"


@dataclass(frozen=True, repr=False)
class Spreadsheet(PartSheet):
    """Predictions against measured truth (None before the reveal), with the score when revealed."""

    predictions: Mapping[int, Prediction]
    lock: LockStatus
    truth: Mapping[int, ItemTruth] | None = None
    table_name: ClassVar[str] = "the twenty: your predictions and what was measured"

    @property
    def revealed(self) -> bool:
        return self.truth is not None

    def judgements(self) -> dict[int, tuple[bool, str]]:
        """Item -> (right, why); empty before the reveal."""
        if not self.truth:
            return {}
        return {i: judge_prediction(p, self.truth[i]) for i, p in self.predictions.items()}

    @property
    def score(self) -> Score | None:
        if not self.truth:
            return None
        return score_sheet(self.predictions, self.truth, self.lock.state, self.lock.reason)

    @property
    def frame(self) -> pd.DataFrame:
        """One row per item; the actual columns say `hidden until the reveal` before it."""
        judged = self.judgements()
        rows = []
        for op in OPS:
            prediction = self.predictions[op.item]
            row = {
                "item": op.item,
                "op": op.expr,
                "prediction": prediction.verdict,
                "rule": prediction.rule,
            }
            if self.truth is None:
                row["actual"] = HIDDEN
            else:
                truth = self.truth[op.item]
                row.update({f"actual ({d})": v for d, v in truth.on_x.items()})
                row["flips under"] = ", ".join(truth.flips) or "none measured"
                row["evidence (x, cpu)"] = evidence_summary(truth.evidence[("x", "cpu")])
                right, why = judged[op.item]
                row["correct"] = "yes" if right else "no"
                row["why"] = why
                row["in strides"] = "" if right else truth.explanation(prediction, units.size)
            rows.append(row)
        frame = pd.DataFrame(rows).set_index("item")
        if self.score is not None:
            frame.attrs["score"] = self.score
        return frame

    def to_csv(self, path) -> None:
        """Save the spreadsheet as CSV, one row per item (`score` holds the total)."""
        self.frame.to_csv(path)

    def headline(self) -> str:
        """The lock state before the reveal; the score after it."""
        if self.score is None:
            return f"Predictions locked; actual column hidden. {self.lock.reason}"
        return self.score.sentence()
