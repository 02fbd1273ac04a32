"""Every miss the reveals can show is explained, and every explanation is true of what PyTorch does
on this machine: each sentence is checked against facts this test measures itself (torch's own
strides, offsets, dtypes and data pointers, NumPy's memory bounds, an in-place write, the
profiler), never through viewcopy's measurement, and no verdict is typed here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from viewcopy.display import units
from viewcopy.display.next_sheet import NextSheet
from viewcopy.display.spreadsheet import Spreadsheet
from viewcopy.engine.explain import explain
from viewcopy.engine.layout import Layout
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.next_ops import POOL, measure_pool
from viewcopy.exercise.part import Prediction
from viewcopy.locking.flow import LockStatus

LOCKED = LockStatus("locked", "Locked.")
LAYOUT = re.compile(r"strides \([\d, ]*\), (?:not )?contiguous")
NEW_STORAGE = re.compile(r"new (\d+) B storage")
DTYPE = re.compile(r"\b(?:u?int\d+|b?float\d+|bool|complex\d+)\b")
VARIANT = re.compile(
    r"Changing only the (\w+) \((\w+) on (\w+)\) (makes|leaves) it an? (\w+)"
    r"|No parent differing from x only in its (\w+) was measured here"
)


@dataclass(frozen=True)
class Facts:
    """One op on one parent, measured by this test: the result (None if torch raised), the
    first line torch raised with, whether an in-place write to the parent showed through, and
    the profiler's operator names."""

    op: str
    name: str
    parent: torch.Tensor
    result: torch.Tensor | None
    error: str
    written_through: bool | None
    kernels: frozenset[str]

    @property
    def verdict(self) -> str:
        if self.result is None:
            return "error"
        if self.result is self.parent:
            return "view"
        shared = np.shares_memory(self.result.numpy(), self.parent.numpy())
        return "view" if shared else "copy"


@cache
def facts(op_expr: str, name: str, parent_expr: str) -> Facts:
    """What `op_expr` does to a fresh parent, measured here without viewcopy."""
    parent = eval(parent_expr, {"torch": torch})
    try:
        with profile(activities=[ProfilerActivity.CPU]) as trace:
            result = eval(op_expr, {"torch": torch, "x": parent})
    except Exception as exc:  # torch's refusal: the fact to check
        error = str(exc).strip().splitlines()[0]
        return Facts(op_expr, name, parent, None, error, None, frozenset())
    kernels = frozenset(event.name for event in trace.events())
    before = result.clone()
    with torch.no_grad():
        parent.add_(100)
    written = not torch.equal(result, before) if result.numel() else None
    with torch.no_grad():
        parent.sub_(100)
    return Facts(op_expr, name, parent, result, "", written, kernels)


def layout_words(tensor: torch.Tensor) -> str:
    contiguous = "contiguous" if tensor.is_contiguous() else "not contiguous"
    return f"strides {tuple(tensor.stride())}, {contiguous}"


def dtype(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def assert_true_of(text: str, found: Facts) -> None:
    """Every stride, offset, dtype, size, kernel and witness the text states is what `found`
    measured, and it names the facts that decide the verdict."""
    assert text.strip()
    tensors = [t for t in (found.parent, found.result) if t is not None]
    assert set(LAYOUT.findall(text)) <= {layout_words(t) for t in tensors}, text
    assert set(DTYPE.findall(text.replace(found.op, ""))) <= {dtype(t) for t in tensors}, text
    assert set(re.findall(r"aten::\w+", text)) <= found.kernels, text
    if found.result is None:
        assert "PyTorch refused" in text and found.error in text, text
        assert layout_words(found.parent) in text, text
        assert not NEW_STORAGE.findall(text) and "shares" not in text, text
        return
    result, parent, name = found.result, found.parent, found.name
    assert "refused" not in text and layout_words(result) in text, text
    if dtype(result) != dtype(parent):
        assert dtype(result) in text and dtype(parent) in text, text
    assert (f"returned {name} itself: the same object" in text) == (result is parent), text
    assert (f"shares {name}'s storage" in text) == (
        found.verdict == "view" and result is not parent
    )
    if f"shares {name}'s storage" in text:
        assert f"offset {result.storage_offset()}, {layout_words(result)}" in text, text
        assert ("data_ptr() differs" in text) == (result.data_ptr() != parent.data_ptr()), text
    sizes = NEW_STORAGE.findall(text)
    expected = [str(result.untyped_storage().nbytes())] if found.verdict == "copy" else []
    assert sizes == expected, text
    through = re.findall(r"(does not show|shows) through", text)
    if result is not parent and found.written_through is not None:
        assert through == ["shows" if found.written_through else "does not show"], text


def twenty_facts(item: int, parent: str) -> Facts:
    return facts(catalogue.op(item).expr, parent, catalogue.parent_expr(parent))


def wrong_verdicts(item: int) -> list[str]:
    """Every verdict of the twenty's choices that is wrong for `item`, judged from this test's
    own facts (a `sometimes` is right only where its variant's verdict differs from x's)."""
    on_x = twenty_facts(item, "x").verdict
    flips = {v.condition for v in catalogue.VARIANTS if twenty_facts(item, v.name).verdict != on_x}
    wrong = [v for v in ("view", "copy") if v != on_x]
    return wrong + [f"sometimes: {c}" for c in catalogue.CONDITIONS if c not in flips]


MISSES = [(op.item, said) for op in catalogue.OPS for said in wrong_verdicts(op.item)]


@pytest.fixture(scope="module")
def truth():
    return measured_truth(("cpu",))


def test_every_item_can_be_missed_at_least_twice():
    assert {item for item, _ in MISSES} == set(catalogue.ITEMS)
    assert all(len(wrong_verdicts(item)) >= 2 for item in catalogue.ITEMS)


@pytest.mark.parametrize(("item", "said"), MISSES)
def test_each_miss_of_the_twenty_is_explained_by_what_was_measured(truth, item, said):
    text = truth[item].explanation(Prediction(said, ""))
    x = twenty_facts(item, "x")
    algebra = explain(catalogue.op(item).expr, Layout.of(x.parent))
    assert algebra is None or text.startswith(algebra)
    mine, _, theirs = text.partition(" Changing only the ")
    mine = mine.split(" No parent differing")[0]
    assert_true_of(mine, x)
    variant = VARIANT.search(text)
    condition = said.partition(": ")[2] or None
    flipping = [v for v in catalogue.VARIANTS if twenty_facts(item, v.name).verdict != x.verdict]
    if condition is None and not flipping:
        assert variant is None, text  # nothing flips it: x's own evidence is the whole story
        return
    assert variant is not None, text
    named, parent, _, effect, verdict, unmeasured = variant.groups()
    if unmeasured:  # only the CPU was measured: no parent differs in the device alone
        assert unmeasured == condition == "device"
        return
    assert named == condition if condition else named in {v.condition for v in flipping}
    assert parent == next(v.name for v in catalogue.VARIANTS if v.condition == named)
    other = twenty_facts(item, parent)
    assert verdict == other.verdict and (effect == "makes") == (other.verdict != x.verdict)
    assert_true_of(theirs.partition(": ")[2], other)


def test_the_reveal_shows_each_miss_explanation_in_display_units(truth):
    predictions = {op.item: Prediction(wrong_verdicts(op.item)[0], "") for op in catalogue.OPS}
    frame = Spreadsheet(predictions, LOCKED, truth).frame
    for op in catalogue.OPS:
        shown = frame.loc[op.item, "in strides"]
        assert shown == truth[op.item].explanation(predictions[op.item], units.size)
        assert_true_of(shown.split(" Changing only the ")[0].split(" No parent")[0],
                       twenty_facts(op.item, "x"))  # fmt: skip


@pytest.mark.parametrize("shift", [1, 2])
def test_every_next_op_missed_either_way_is_explained_by_what_was_measured(shift):
    choices = ("view", "copy", "error")
    facts_of = {op.id: facts(op.op, op.parent, op.parent_expr) for op in POOL}
    wrong = {op.id: choices[(choices.index(facts_of[op.id].verdict) + shift) % 3] for op in POOL}
    predictions = {op_id: Prediction(verdict, "") for op_id, verdict in wrong.items()}
    frame = NextSheet(POOL, predictions, LOCKED, measure_pool("cpu")).frame
    assert (frame["correct"] == "no").all()
    for op in POOL:
        shown = frame.loc[op.id, "in strides"]
        algebra = explain(op.op, Layout.of(facts_of[op.id].parent))
        assert algebra is None or shown.startswith(algebra)
        assert_true_of(shown, facts_of[op.id])


def test_right_predictions_get_no_explanation(truth):
    predictions = {
        op.item: Prediction(twenty_facts(op.item, "x").verdict, "") for op in catalogue.OPS
    }
    frame = Spreadsheet(predictions, LOCKED, truth).frame
    assert (frame["in strides"] == "").all()


@pytest.mark.parametrize("item", [1, 8, 13])
def test_a_device_that_does_not_flip_it_is_explained_by_its_own_evidence(item):
    """`x` on a second device (meta here, which every machine has: strides without data)."""
    text = measured_truth(("cpu", "meta"))[item].explanation(Prediction("sometimes: device", ""))
    _, lead, theirs = text.partition(" Changing only the device (x on meta) ")
    assert lead, text
    with torch.device("meta"):
        x = eval(catalogue.PARENT_EXPR, {"torch": torch})
    result = eval(catalogue.op(item).expr, {"torch": torch, "x": x})
    assert set(LAYOUT.findall(theirs)) == {layout_words(result)}, text
