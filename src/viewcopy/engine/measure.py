"""Measuring one op on one parent on one device: the verdict and the evidence behind it.

Two independent witnesses decide view or copy and must agree, or no verdict is given: storage
identity (the untyped storages of both tensors, `viewcopy.engine.storage`) and a write-through
probe (flip every byte of a fresh parent's storage and see whether the result's elements change).
A grade must never rest on one observation that a PyTorch release could change the meaning of.
The profiler is a third witness, shown but not deciding.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import warnings
from collections.abc import Callable, Iterator

import torch

from viewcopy.engine.devices import allocated_bytes, synchronize
from viewcopy.engine.evidence import Evidence, MeasurementDisagreement
from viewcopy.engine.expressions import ExpressionError, op_function, parent_factory
from viewcopy.engine.layout import Layout
from viewcopy.engine.profiling import profiled
from viewcopy.engine.storage import shares_memory

PROBE_SAMPLES = 8
"""How many elements of the result the write-through probe reads (bounded, whatever the numel)."""


class NotATensor(ExpressionError):
    """The expression gave something other than a tensor, so there is nothing to classify."""


def sample_indices(shape: tuple[int, ...], count: int = PROBE_SAMPLES) -> list[tuple[int, ...]]:
    """Up to `count` logical indices spread over a tensor: its corners first, then the middle."""
    ends = [sorted({0, n - 1, n // 2}) for n in shape]
    return list(itertools.islice(itertools.product(*ends), count))


def element_bits(tensor: torch.Tensor, index: tuple[int, ...]) -> bytes:
    """The raw bytes of one element, so NaN and -0.0 compare by bits."""
    element = tensor[index].detach().reshape(1).clone()
    return bytes(element.view(torch.uint8).cpu().tolist())


def flip_storage(tensor: torch.Tensor) -> None:
    """Invert every byte of the tensor's storage, through a fresh uint8 alias of it."""
    with torch.no_grad():
        alias = torch.empty(0, dtype=torch.uint8, device=tensor.device)
        alias.set_(tensor.untyped_storage())
        alias.bitwise_not_()


def write_through(result: torch.Tensor, parent: torch.Tensor) -> bool | None:
    """Does writing the parent's memory change the result? None when there is nothing to read."""
    if result.numel() == 0 or result.device.type == "meta" or parent.device.type == "meta":
        return None
    if parent.untyped_storage().nbytes() == 0:
        return None
    indices = sample_indices(tuple(result.shape))
    before = [element_bits(result, i) for i in indices]
    flip_storage(parent)
    synchronize(parent.device.type)
    after = [element_bits(result, i) for i in indices]
    return before != after


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _checked_tensor(value: object, op_expr: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)) and value and isinstance(value[0], torch.Tensor):
        raise NotATensor(
            f"expression {op_expr!r} gives a {type(value).__name__} of {len(value)} tensors; "
            f"probe one of them, e.g. ({op_expr})[0]"
        )
    raise NotATensor(f"expression {op_expr!r} gives a {type(value).__name__}, not a tensor")


def measure_with(
    op: Callable[[torch.Tensor], object],
    make_parent: Callable[[], torch.Tensor],
    *,
    op_expr: str,
    parent_name: str,
    item: int | None = None,
) -> Evidence:
    """Apply `op` to fresh parents from `make_parent` and collect the evidence.

    The device recorded is the one the parent was actually built on.
    """
    parent = make_parent()
    device = parent.device.type
    label = {"op": op_expr, "parent": parent_name, "device": device, "item": item}
    parent_layout = Layout.of(parent)
    synchronize(device)
    with _uncollected(device):
        before = allocated_bytes(device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value, profile, error = profiled(lambda: op(parent))
        synchronize(device)
        after = allocated_bytes(device)
    if isinstance(error, ExpressionError):
        raise error
    notes = tuple(dict.fromkeys(str(w.message).splitlines()[0] for w in caught))
    if error is not None:
        return Evidence(
            **label,
            verdict="error",
            message=_first_line(error),
            kernels=profile.kernels,
            copy_kernels=profile.copy_kernels,
            parent_layout=parent_layout,
            warnings=notes,
        )
    result = _checked_tensor(value, op_expr)
    same_storage = shares_memory(result, parent)
    evidence = Evidence(
        **label,
        verdict="view" if same_storage else "copy",
        same_object=result is parent,
        same_storage=same_storage,
        same_data_ptr=result.data_ptr() == parent.data_ptr(),
        write_through=_probe(op, make_parent),
        bytes_allocated=profile.cpu_bytes if before is None else after - before,
        kernels=profile.kernels,
        copy_kernels=profile.copy_kernels,
        parent_layout=parent_layout,
        result_layout=Layout.of(result),
        warnings=notes,
    )
    if evidence.write_through is not None and evidence.write_through != same_storage:
        raise MeasurementDisagreement(
            f"{op_expr} on {parent_name} ({device}): storage identity says "
            f"{'shared' if same_storage else 'separate'} but the write-through probe says "
            f"{'shared' if evidence.write_through else 'separate'}; refusing to give a verdict"
        )
    return evidence


@contextlib.contextmanager
def _uncollected(device: str) -> Iterator[None]:
    """No garbage collection while a device's allocator is read around an op: earlier
    measurements' garbage freed meanwhile read as negative bytes allocated (-512 B on CUDA, seen).
    CPU's bytes come from the profiler and need nothing."""
    if device == "cpu" or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _probe(op: Callable[[torch.Tensor], object], make_parent: Callable[[], torch.Tensor]):
    parent = make_parent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = op(parent)
    return write_through(result, parent) if isinstance(result, torch.Tensor) else None


_kept: dict[tuple, Evidence] = {}
"""Evidence `measure` gives without measuring again, by its arguments: what a grading worker's
kernel template had measured once, on this machine with this torch, before it forked the kernel
(`measured_once`, `keep`). Empty in every other process: a student's measures every time."""
_keeping = False


def measured_once(measuring: Callable[[], object]) -> dict[tuple, Evidence]:
    """Run `measuring` (this process then ends: a template's child) and return every evidence
    `measure` gave meanwhile, by its arguments."""
    global _keeping
    _keeping = True
    try:
        measuring()
    finally:
        _keeping = False
    return dict(_kept)


def kept() -> int:
    """How many evidences this process gives without measuring again."""
    return len(_kept)


def keep(measured: dict[tuple, Evidence]) -> None:
    """`measure` gives these (measured_once's) without measuring again, in this process and the
    kernels forked from it."""
    _kept.update(measured)


def measure(
    op_expr: str,
    parent_expr: str,
    device: str = "cpu",
    *,
    item: int | None = None,
    parent_name: str | None = None,
) -> Evidence:
    """Evidence for the expression `op_expr` applied to the parent `parent_expr`, bound as `x`."""
    key = (op_expr, parent_expr, device, item, parent_name)
    if key in _kept:
        return _kept[key]
    evidence = measure_with(
        op_function(op_expr),
        parent_factory(parent_expr, device),
        op_expr=op_expr,
        parent_name=parent_name or parent_expr,
        item=item,
    )
    if _keeping:
        _kept[key] = evidence
    return evidence
