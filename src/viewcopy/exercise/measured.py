"""The twenty, measured: evidence per item, parent and device, and what it says about each item.

This is where the lab's content meets the engine. Every verdict the lab shows, scores or reports
comes from here, measured on the machine running it; nothing here says what an op returns.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from viewcopy.engine.devices import available_devices
from viewcopy.engine.evidence import Evidence
from viewcopy.engine.measure import measure
from viewcopy.engine.reason import Size, exact_bytes
from viewcopy.exercise import catalogue
from viewcopy.exercise.miss_explanation import miss_explanation
from viewcopy.exercise.part import Prediction


def measure_item(item: int, parent: str = "x", device: str = "cpu") -> Evidence:
    """Evidence for one of the twenty on `x` or on a variant (by name), on one device."""
    return measure(
        catalogue.op(item).expr,
        catalogue.parent_expr(parent),
        device,
        item=item,
        parent_name=parent,
    )


@functools.cache
def measure_catalogue(devices: tuple[str, ...]) -> tuple[Evidence, ...]:
    """The twenty on `x` and on every variant, on each device: device, then parent, then item.

    Measured once per process and devices: the lock, the reveal, the checks and the debrief of one
    graded run read the same (immutable) evidence instead of re-measuring it four times.
    """
    return tuple(
        measure_item(op.item, parent, device)
        for device in devices
        for parent in catalogue.PARENTS
        for op in catalogue.OPS
    )


@dataclass(frozen=True)
class ItemTruth:
    """What measurement says about one item: its verdict on `x` per device, and what flips it."""

    item: int
    on_x: Mapping[str, str]
    flips: tuple[str, ...]
    evidence: Mapping[tuple[str, str], Evidence]

    @property
    def reference(self) -> str:
        """The verdict on `x` on the CPU, which every machine has."""
        return self.on_x["cpu"]

    def explanation(self, said: Prediction | None = None, size: Size = exact_bytes) -> str:
        """Why the item is what it is, for a student who said `said`: where it lands in strides
        (where the layout algebra models it), then what was measured on `x` and on the parent
        the miss turns on (`miss_explanation`). It explains the verdict and never decides it."""
        return miss_explanation(said, self.evidence, self.flips, size)


def truth_table(evidence: Iterable[Evidence]) -> dict[int, ItemTruth]:
    """Group measured evidence (from measure_catalogue) into one ItemTruth per item."""
    found: dict[int, dict[tuple[str, str], Evidence]] = {i: {} for i in catalogue.ITEMS}
    for e in evidence:
        found[e.item][(e.parent, e.device)] = e
    return {item: _item_truth(item, by_key) for item, by_key in found.items()}


def measured_truth(devices: tuple[str, ...] | None = None) -> dict[int, ItemTruth]:
    """The truth of the twenty on `devices` (default: every device this machine has)."""
    return truth_table(measure_catalogue(devices or available_devices()))


def _item_truth(item: int, by_key: Mapping[tuple[str, str], Evidence]) -> ItemTruth:
    devices = [device for parent, device in by_key if parent == "x"]
    on_x = {d: by_key[("x", d)].verdict for d in devices}
    flips = []
    for variant in catalogue.VARIANTS:
        if any(
            (variant.name, d) in by_key and by_key[(variant.name, d)].verdict != on_x[d]
            for d in devices
        ):
            flips.append(variant.condition)
    if len(set(on_x.values())) > 1:
        flips.append("device")
    return ItemTruth(item, on_x, tuple(flips), dict(by_key))
