"""The notebook's cells, one function each: setup, the twenty, lock, reveal, the debrief.

This is the API the released notebook imports (`from viewcopy import notebook as lab`; `lock` and
`reveal` also as `viewcopy.lock` and `viewcopy.reveal`); the graded cells call `viewcopy.checks`.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence

import pandas as pd
import torch

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.display import units
from viewcopy.display.next_sheet import NextSheet
from viewcopy.display.parts_table import parts_frame
from viewcopy.display.production_sheet import ProductionSheet
from viewcopy.display.spreadsheet import Spreadsheet
from viewcopy.display.table import FullTable
from viewcopy.engine.cost import measure_costs
from viewcopy.engine.devices import available_devices
from viewcopy.engine.expressions import parent_factory
from viewcopy.engine.layout import Layout
from viewcopy.engine.torch_range import below_floor
from viewcopy.exercise import catalogue
from viewcopy.exercise.graded_parts import declared_parts
from viewcopy.exercise.measured import measure_catalogue, measured_truth
from viewcopy.exercise.next_ops import declared_ops, measure_pool, op_by_id, use_course_ops
from viewcopy.exercise.next_predictions import NEXT, hand_in_draw, parsed_sheet
from viewcopy.exercise.part import Part, Prediction, PredictionError
from viewcopy.exercise.predictions import TWENTY
from viewcopy.exercise.production import PRODUCTION
from viewcopy.exercise.production_model import forward_listing, profile_forward
from viewcopy.exercise.written import unwritten_reason
from viewcopy.locking import flow
from viewcopy.locking.file import LockError, lock_path, read_lock
from viewcopy.locking.flow import LockStatus, ServiceLock
from viewcopy.locking.gate import TruthFirst, truth_shown
from viewcopy.locking.record import TWENTY as TWENTY_KEY
from viewcopy.locking.recover import Recovery, restore
from viewcopy.notebook import checks as checks  # loaded by the setup cell, never in a graded one
from viewcopy.notebook import colab, undefined


def setup(lock_service: str = "", lock_token: str = "") -> None:
    """Enable Colab's widget manager when in Colab; say which torch and devices are measured (and,
    below the tested floor, to upgrade), and which lock service (if any) records the lock. The
    environment's VIEWCOPY_LOCK_SERVICE and VIEWCOPY_LOCK_TOKEN win over what the cell passes.
    From here on, a cell run before the one defining a name it uses says which to run first."""
    undefined.install()
    if colab.enable_widgets():
        print("Colab: custom widget manager enabled (the diagram explorer needs it)")
    devices = available_devices()
    others = (
        "" if len(devices) > 1 else " (no CUDA or MPS here: the device variant is not measured)"
    )
    print(f"torch {torch.__version__}; measuring on: {', '.join(devices)}{others}")
    if (upgrade := below_floor()) is not None:
        print(upgrade)
    for name, value in (
        ("VIEWCOPY_LOCK_SERVICE", lock_service),
        ("VIEWCOPY_LOCK_TOKEN", lock_token),
    ):
        if value.strip() and not os.environ.get(name, "").strip():
            os.environ[name] = value.strip()
    service = course_lock_service()
    if service is not None:
        where = service.client.url if service.client else os.environ["VIEWCOPY_LOCK_SERVICE"]
        print(f"lock service: {where}" + (f" ({service.problem})" if service.problem else ""))


def parts(
    points: Mapping[str, float] | None = None,
    declared: Sequence[Mapping[str, object]] = (),
    next_ops: Sequence[Mapping[str, object]] = (),
) -> FullTable:
    """The graded parts as the master's graded cells define them: their cells, what each asks,
    its minutes and its points, the stretch marked (it counts), and the totals; shown whole
    (`.frame` is the table). What the course's master and declaration change is written into the
    release's call (WritePoints): `points` (grade id -> points), `declared` (the course's own
    parts) and `next_ops` (the course's own next ops, drawn from in this kernel from now on)."""
    use_course_ops(declared_ops(next_ops))
    frame = parts_frame(points=points, declared=declared_parts(declared))
    return FullTable(frame, "graded parts")


def show_twenty() -> pd.DataFrame:
    """The twenty as the lab card writes them, and the variant parents that judge `sometimes`."""
    variants = [(v.condition, v.name, v.expr, v.description) for v in catalogue.VARIANTS]
    variants.append(
        ("device", "x on cuda / mps", "x.to(device)", catalogue.DEVICE_VARIANT_DESCRIPTION)
    )
    rows = "".join(
        f"<tr><td>{c}</td><td><code>{html.escape(n)}</code></td><td><code>{html.escape(e)}</code>"
        f"</td><td>{html.escape(d)}</td></tr>"
        for c, n, e, d in variants
    )
    from IPython.display import HTML, display

    display(
        HTML(
            "<p><b>Variant parents</b>: <code>sometimes: &lt;condition&gt;</code> is right when "
            "the verdict flips on the parent that differs from <code>x</code> only in that "
            "condition.</p><table><tr><th>condition</th><th>parent</th><th>built by</th>"
            "<th>what differs</th></tr>"
            f"{rows}</table>"
        )
    )
    frame = pd.DataFrame(
        [(op.item, op.card, op.expr) for op in catalogue.OPS],
        columns=["item", "as the lab card writes it", "evaluated as"],
    )
    return frame.set_index("item")


def debrief() -> pd.DataFrame | TruthFirst:
    """The profiler's copy kernels for the twenty: the list just learned, as a profile shows it
    (after the twenty's reveal; before it, the sentence that says so)."""
    if not truth_shown():
        return TruthFirst()
    rows = [
        (e.item, e.op, e.verdict, units.kernels(e.copy_kernels), units.size(e.bytes_allocated))
        for e in measure_catalogue(("cpu",))
        if e.parent == "x"
    ]
    frame = pd.DataFrame(rows, columns=["item", "op", "verdict", "copy kernels", "allocated"])
    return frame.set_index("item")


def lock(predictions: object, *, directory=None) -> Spreadsheet:
    """Validate PREDICTIONS, lock them beside the notebook, show them with the actual column hidden.

    Where the course runs a lock service (VIEWCOPY_LOCK_SERVICE and VIEWCOPY_LOCK_TOKEN), the
    lock is registered there too. Raises PredictionError (naming every bad item, writing nothing)
    or LockError (also when the service refuses: a lock after the reveal). PREDICTIONS must be
    the dict its answer cell writes out: a computed sheet is refused (PredictionError).
    """
    parsed, state = locked(TWENTY, predictions, directory)
    return Spreadsheet(parsed, state)


def reveal(predictions: object, *, directory=None, devices: tuple[str, ...] | None = None):
    """Measure the twenty on every device and variant, and fill the spreadsheet with the truth.

    Refuses (LockError) unless PREDICTIONS are exactly what was locked; registers the reveal
    with the course's lock service, when there is one, before anything is shown.
    """
    parsed, state = revealed(TWENTY, predictions, directory)
    return Spreadsheet(parsed, state, measured_truth(devices))


def locked(part: Part, value: object, directory=None) -> tuple[dict, LockStatus]:
    """The one path every part's lock cell takes: refuse a computed sheet, parse it for this
    hand-in's keys (every bad entry named, nothing written), lock it."""
    if (reason := unwritten_reason(value, part.label)) is not None:
        raise PredictionError([(part.label, reason)], part.label)
    lost = _restored(directory).lost
    parsed = _parsed(part, value, directory)
    return parsed, flow.lock(part, parsed, directory, course_lock_service(), lost_lock=lost)


def revealed(part: Part, value: object, directory=None) -> tuple[dict, LockStatus]:
    """The one path every part's reveal cell takes: parse, and refuse unless it is the lock's."""
    _restored(directory)
    parsed = _parsed(part, value, directory)
    return parsed, flow.reveal(part, parsed, directory, course_lock_service())


def _restored(directory) -> Recovery:
    """A lock file lost with the runtime's files, restored from the notebook's own outputs where
    they carry it; what was found is said once, in the cell that found it."""
    recovery = restore(directory) or Recovery()
    if note := recovery.note():
        print(note)
    return recovery


def _parsed(part: Part, value: object, directory) -> dict[object, Prediction]:
    record = read_lock(directory)
    if part.key != TWENTY_KEY and (record is None or not record.revealed_at):
        raise LockError(
            f"Lock and reveal the twenty first: {part.label} comes after them (run the lock and "
            "reveal cells above)."
        )
    return parsed_sheet(part, value, record, lock_path(directory))


def next_ops() -> dict[str, tuple[str, str]]:
    """This hand-in's ten next ops, drawn from its lock of the twenty (after their reveal):
    shown with the parents' shapes and strides, with a NEXT_PREDICTIONS template; returned as
    {id: (parent_expr, op_expr)} so any of them can be re-run by hand."""
    from IPython.display import HTML, display

    _restored(None)
    ops = hand_in_draw(read_lock())
    rows = []
    for op in ops:
        layout = Layout.of(parent_factory(op.parent_expr, "cpu")())
        rows.append(
            f"<tr><td>{op.id}</td><td>{html.escape(op.family)}</td>"
            f"<td><code>{html.escape(op.parent)}</code> shape {layout.shape}, strides "
            f"{layout.stride}</td><td><code>{html.escape(op.op)}</code></td></tr>"
        )
    display(
        HTML(
            "<table><tr><th>id</th><th>family</th><th>parent (x)</th><th>op</th></tr>"
            f"{''.join(rows)}</table>"
        )
    )
    template = "".join(f"    {op.id!r}: ('', ''),  # {op.op} on {op.parent}\n" for op in ops)
    print(f"Copy into the next cell and fill in:\nNEXT_PREDICTIONS = {{\n{template}}}")
    return {op.id: (op.parent_expr, op.op) for op in ops}


def lock_next(next_predictions: object, *, directory=None) -> NextSheet:
    """Validate NEXT_PREDICTIONS against this hand-in's ten and lock them, actual column hidden.

    Raises PredictionError (naming every bad id, writing nothing) or LockError.
    """
    parsed, state = locked(NEXT, next_predictions, directory)
    return NextSheet(tuple(map(op_by_id, parsed)), parsed, state)  # parsed in draw order


def reveal_next(next_predictions: object, *, directory=None) -> NextSheet:
    """Measure this hand-in's ten and show the truth, the evidence and each miss's diagram;
    refuses (LockError) unless NEXT_PREDICTIONS are exactly what was locked."""
    parsed, state = revealed(NEXT, next_predictions, directory)
    ops, measured = tuple(map(op_by_id, parsed)), measure_pool()
    return NextSheet(ops, parsed, state, {op.id: measured[op.id] for op in ops})


def what_did_you_pay() -> None:
    """Question 25, measured on every device here: permute, permute then contiguous, channels-last,
    and a conv on NCHW against channels-last, against the machine's own copy bandwidth (after
    the twenty's reveal: it measures permute and contiguous)."""
    from IPython.display import display

    from viewcopy.display.cost_figure import cost_bundles  # matplotlib: no grader needs it

    if not truth_shown():
        display(TruthFirst())
        return
    for device in available_devices():
        for bundle in cost_bundles(measure_costs(device)):
            display(bundle, raw=True)


def show_production() -> None:
    """The production model's forward, numbered, and a PRODUCTION template."""
    listing = forward_listing()
    width = len(str(len(listing)))
    print("\n".join(f"{n:>{width}}  {code}" for n, code in listing))
    template = "".join(f"    {n}: '',  # {code}\n" for n, code in listing)
    print(f"\nWrite, for every line, 'copy' or 'no copy':\nPRODUCTION = {{\n{template}}}")


def lock_production(production: object, *, directory=None) -> ProductionSheet:
    """Validate PRODUCTION and lock it, the profile hidden. PredictionError or LockError."""
    return ProductionSheet(*locked(PRODUCTION, production, directory))


def profile_production(production: object, *, directory=None, device: str = "cpu"):
    """Profile the forward and charge every copy kernel to its line: count, bytes, time, and the
    copies' share of the forward; refuses (LockError) unless PRODUCTION is what was locked."""
    return ProductionSheet(*revealed(PRODUCTION, production, directory), profile_forward(device))


def course_lock_service() -> ServiceLock | None:
    """The course's lock service for this lab, from the environment; None when there is none."""
    return ServiceLock.from_environment(ASSIGNMENT)
