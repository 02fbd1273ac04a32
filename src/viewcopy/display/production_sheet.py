"""The production model's sheet: each line of its forward, the student's prediction and, once
profiled, what it dispatched: copy kernels, bytes, time, and the copies' share of the forward."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from viewcopy.display.part_sheet import PartSheet
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.production_model import ProductionProfile, forward_listing
from viewcopy.locking.flow import LockStatus


@dataclass(frozen=True, repr=False)
class ProductionSheet(PartSheet):
    """PRODUCTION against the profiled forward (None before `profile_production`)."""

    predictions: Mapping[int, Prediction]
    lock: LockStatus
    profile: ProductionProfile | None = None

    @property
    def frame(self) -> pd.DataFrame:
        rows = []
        for number, code in forward_listing():
            row = {"line": number, "code": code, "prediction": self.predictions[number].verdict}
            if self.profile is not None:
                copies = self.profile.lines.get(number)
                row["measured"] = self.profile.verdict(number)
                row["correct"] = "yes" if row["measured"] == row["prediction"] else "no"
                row["kernels"] = ", ".join(copies.kernels) if copies else ""
                row["count"] = copies.count if copies else 0
                row["bytes"] = copies.bytes if copies else 0
                row["time_us"] = round(copies.seconds * 1e6, 1) if copies else 0.0
            rows.append(row)
        return pd.DataFrame(rows).set_index("line")

    def headline(self) -> str:
        if self.profile is None:
            return f"PRODUCTION locked; the profile is hidden. {self.lock.reason}"
        frame = self.frame
        right, share = (
            (frame["correct"] == "yes").sum(),
            self.profile.copy_s / self.profile.forward_s,
        )
        return (
            f"{right}/{len(frame)} lines predicted correctly. Copies: "
            f"{int(frame['count'].sum())} kernels, {int(frame['bytes'].sum())} bytes, "
            f"{self.profile.copy_s * 1e6:.0f} µs of a {self.profile.forward_s * 1e6:.0f} µs "
            f"forward ({share:.0%}) on {self.profile.device}. {self.lock.reason}"
        )

    @property
    def revealed(self) -> bool:
        return self.profile is not None
