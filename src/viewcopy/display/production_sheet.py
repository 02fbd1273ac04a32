"""The production model's sheet: each line of its forward, the student's prediction and, once
profiled, what it dispatched. Layout copies (what PRODUCTION predicts) with their kernels, bytes,
time and bandwidth against the copy floor (in words instead where the machine was too busy for a
share of it to be true); kernel-internal copies beside them, labelled as copies nobody wrote and
not graded; and the copies' share of the forward they ran in."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from viewcopy.display import units
from viewcopy.display.part_sheet import PartSheet
from viewcopy.engine.copy_trace import LineCopies
from viewcopy.engine.cost import FLOOR_TOLERANCE
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.production_model import ProductionProfile, forward_listing
from viewcopy.locking.flow import LockStatus

NOBODY_WROTE = (
    "Copies nobody wrote: a compute kernel initialising its own output (CPU addmm copies a "
    "Linear's bias into its output before the matmul; a Python number becomes a tensor for mul, "
    "a mean divides through one). They cost time too, but no line asks for them, so PRODUCTION "
    "does not ask for them: their lines are not graded, either answer stands."
)


@dataclass(frozen=True, repr=False)
class ProductionSheet(PartSheet):
    """PRODUCTION against the profiled forward (None before `profile_production`)."""

    predictions: Mapping[int, Prediction]
    lock: LockStatus
    profile: ProductionProfile | None = None
    table_name: ClassVar[str] = "the production model: your predictions and what was profiled"

    @property
    def frame(self) -> pd.DataFrame:
        rows = []
        for number, code in forward_listing():
            row = {"line": number, "code": code, "prediction": self.predictions[number].verdict}
            if self.profile is not None:
                copies = self.profile.lines.get(number)
                row["measured"] = self.profile.verdict(number)
                row["correct"] = (
                    "not graded"
                    if number in self.profile.internal and number not in self.profile.lines
                    else "yes"
                    if row["measured"] == row["prediction"]
                    else "no"
                )
                row["layout copies"] = self._copies(copies)
                row["bandwidth (of floor)"] = self._bandwidth(copies)
                row["copies nobody wrote"] = self._copies(self.profile.internal.get(number))
            rows.append(row)
        return pd.DataFrame(rows).set_index("line")

    def _copies(self, copies: LineCopies | None) -> str:
        if copies is None:
            return units.NONE
        count = f"{copies.count} × " if copies.count > 1 else ""
        return (
            f"{count}{units.kernels(copies.kernels)}: {units.size(copies.bytes)}, "
            f"{units.seconds(copies.seconds)}"
        )

    def _bandwidth(self, copies: LineCopies | None) -> str:
        if copies is None:
            return units.NONE
        gbs = self.profile.bandwidth_gbs(copies)
        if not self._compared:
            return f"{units.rate(gbs)} ({units.BUSY})"
        return f"{units.rate(gbs)} ({units.share(units.ratio(gbs, self.profile.floor.gbs))})"

    @property
    def _compared(self) -> bool:
        """Whether the layout copies' bandwidth can be read against the floor measured with them."""
        rates = (self.profile.bandwidth_gbs(row) for row in self.profile.lines.values())
        return self.profile.floor.compares(rates)

    def _floor(self) -> str:
        if not self._compared:
            return f"bandwidth is read plus write. {units.TOO_BUSY}"
        return (
            f"bandwidth is read plus write against this machine's copy floor, "
            f"{units.rate(self.profile.floor.gbs)}, the fastest of its plain copy_ runs (a share "
            f"past {units.share(1 + FLOOR_TOLERANCE)} would say the machine was busy while they "
            f"ran, and is not shown)."
        )

    def headline(self) -> str:
        if self.profile is None:
            return f"PRODUCTION locked; the profile is hidden. {self.lock.reason}"
        frame, profile = self.frame, self.profile
        right = (frame["correct"] != "no").sum()  # a line that is not graded stands
        layout = sum(row.count for row in profile.lines.values())
        internal = sum(row.count for row in profile.internal.values())
        moved = sum(row.bytes for row in [*profile.lines.values(), *profile.internal.values()])
        return (
            f"{right}/{len(frame)} lines predicted correctly. Copies: {layout + internal} "
            f"kernels ({layout} layout, {internal} nobody wrote), {units.size(moved)}, "
            f"{units.seconds(profile.copy_s)} of a {units.seconds(profile.forward_s)} forward "
            f"({units.share(profile.share)}) on {profile.device}: medians of {profile.runs} "
            f"warm profiled runs, the copies timed in the runs they are a share of; "
            f"{self._floor()} {self.lock.reason}"
        )

    def below(self) -> str:
        return f"<p>{html.escape(NOBODY_WROTE)}</p>" if self.revealed else ""

    @property
    def revealed(self) -> bool:
        return self.profile is not None
