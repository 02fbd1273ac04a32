"""A pure-Python model of a strided tensor: which storage element each logical index reaches.

No torch here: this is the model the diagrams draw from and the tests check torch against.
Everything is bounded by how many cells are asked for, never by the tensor's numel.

Layouts also form a small algebra: `t`, `transpose`, `permute`, `index`, `expand`, `unsqueeze`,
`squeeze`, `view` and `reshape` derive the layout torch gives, so an explanation can say why.
Invalid arguments (torch would raise) raise ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import product

Index = tuple[int, ...]
Shape = tuple[int, ...]
Strides = tuple[int, ...]


@dataclass(frozen=True)
class Layout:
    """Shape, strides and offset in elements, over a storage of `storage_numel` elements."""

    shape: Shape
    stride: Strides
    offset: int
    itemsize: int
    storage_numel: int
    dtype: str = ""

    @classmethod
    def of(cls, tensor) -> Layout:
        """Read a tensor's metadata (never its data)."""
        itemsize = tensor.element_size()
        return cls(
            shape=tuple(tensor.shape),
            stride=tuple(tensor.stride()),
            offset=tensor.storage_offset(),
            itemsize=itemsize,
            storage_numel=tensor.untyped_storage().nbytes() // itemsize,
            dtype=str(tensor.dtype).removeprefix("torch."),
        )

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def logical_bytes(self) -> int:
        return self.numel * self.itemsize

    @property
    def storage_bytes(self) -> int:
        return self.storage_numel * self.itemsize

    def dims(self) -> tuple[tuple[int, int], ...]:
        """(size, stride) per dimension."""
        return tuple(zip(self.shape, self.stride, strict=True))

    def storage_index(self, index: Index) -> int:
        """The storage element that logical `index` reads."""
        return self.offset + sum(i * s for i, s in zip(index, self.stride, strict=True))

    def is_contiguous(self) -> bool:
        """Row-major packed, with torch's rules: size-1 dimensions may have any stride, and an
        empty tensor is contiguous whatever its strides."""
        if self.numel == 0:
            return True
        expected = 1
        for size, stride in reversed(self.dims()):
            if size == 1:
                continue
            if stride != expected:
                return False
            expected *= size
        return True

    def broadcast_factor(self) -> int:
        """How many logical cells share each storage element through stride-0 dimensions."""
        return math.prod(n for n, s in self.dims() if s == 0 and n > 0)

    def t(self) -> Layout:
        """x.t(): swap a matrix's two dimensions; vectors and scalars are unchanged."""
        if len(self.shape) > 2:
            raise ValueError(f"t() expects at most 2 dimensions, not {len(self.shape)}")
        return self.transpose(0, -1)

    def transpose(self, dim0: int, dim1: int) -> Layout:
        """x.transpose(dim0, dim1): swap two dimensions' sizes and strides."""
        ndim = len(self.shape)
        a, b = _wrap(dim0, ndim), _wrap(dim1, ndim)
        order = list(range(ndim))
        if ndim:
            order[a], order[b] = b, a
        return self.permute(*order)

    def permute(self, *dims: int) -> Layout:
        """x.permute(*dims): the same dimensions in another order."""
        order = [_wrap(d, len(self.shape)) for d in dims]
        if sorted(order) != list(range(len(self.shape))):
            raise ValueError(f"{dims} does not reorder {len(self.shape)} dimensions")
        return self._pick(order)

    def index(self, *items: int | slice) -> Layout:
        """x[items] with ints (dropping their dimension) and positive-step slices, per dimension."""
        if len(items) > len(self.shape):
            raise ValueError(f"{len(items)} indices for {len(self.shape)} dimensions")
        shape, stride, offset = [], [], self.offset
        for d, (size, step) in enumerate(self.dims()):
            item = items[d] if d < len(items) else slice(None)
            if not isinstance(item, slice):
                if not -size <= item < size:
                    raise ValueError(f"index {item} is out of range for size {size}")
                offset += item % size * step
                continue
            if item.step is not None and item.step <= 0:
                raise ValueError("slices need a positive step")
            jump = item.step or 1
            start = _clamp(item.start, 0, size)
            stop = max(_clamp(item.stop, size, size), start)
            shape.append(-(-(stop - start) // jump))
            stride.append(step * jump)
            offset += start * step
        return replace(self, shape=tuple(shape), stride=tuple(stride), offset=offset)

    def expand(self, *sizes: int) -> Layout:
        """x.expand(*sizes): -1 keeps a size; a size-1 or new leading dimension that grows gets
        stride 0, and a new leading dimension of size 1 gets the stride torch gives it."""
        extra = len(sizes) - len(self.shape)
        if extra < 0 or any(n < -1 for n in sizes):
            raise ValueError(f"cannot expand {self.shape} to {sizes}")
        if not self.shape:
            if -1 in sizes:
                raise ValueError("-1 cannot size a new dimension")
            return replace(self, shape=tuple(sizes), stride=(0,) * len(sizes))
        shape, stride = list(sizes), [0] * len(sizes)
        for i in reversed(range(len(sizes))):
            if i >= extra:
                size, step = self.shape[i - extra], self.stride[i - extra]
            elif sizes[i] == -1:
                raise ValueError("-1 cannot size a new dimension")
            else:
                size, step = 1, shape[i + 1] * stride[i + 1]
            if sizes[i] in (-1, size):
                shape[i], stride[i] = size, step
            elif size != 1:
                raise ValueError(f"cannot expand size {size} to {sizes[i]}")
        return replace(self, shape=tuple(shape), stride=tuple(stride))

    def unsqueeze(self, dim: int) -> Layout:
        """x.unsqueeze(dim): a new size-1 dimension, strided as if it stepped over the one after."""
        d = _wrap(dim, len(self.shape) + 1)
        step = self.shape[d] * self.stride[d] if d < len(self.shape) else 1
        return replace(
            self,
            shape=(*self.shape[:d], 1, *self.shape[d:]),
            stride=(*self.stride[:d], step, *self.stride[d:]),
        )

    def squeeze(self, dim: int | None = None) -> Layout:
        """x.squeeze(): drop every size-1 dimension; x.squeeze(dim): drop that one if size 1."""
        dims = range(len(self.shape))
        if dim is not None:
            d = _wrap(dim, len(self.shape))
            dims = [d] if self.shape else []
        dropped = {d for d in dims if self.shape[d] == 1}
        return self._pick([d for d in range(len(self.shape)) if d not in dropped])

    def view(self, *shape: int) -> Layout | None:
        """x.view(*shape) over the same storage, or None when these strides cannot express it."""
        result = self._regroup(shape)
        return result if isinstance(result, Layout) else None

    def view_failure(self, *shape: int) -> str | None:
        """Why x.view(*shape) fails, naming the dimensions that cannot merge; None if it works."""
        result = self._regroup(shape)
        return result if isinstance(result, str) else None

    def reshape(self, *shape: int) -> Layout:
        """x.reshape(*shape): the view when there is one, else a contiguous copy in new storage."""
        view = self.view(*shape)
        if view is not None:
            return view
        new = _infer(shape, self.numel)
        return replace(self, shape=new, stride=_row_major(new), offset=0, storage_numel=self.numel)

    def _pick(self, dims: Sequence[int]) -> Layout:
        """These dimensions, in this order, over the same storage."""
        return replace(
            self,
            shape=tuple(self.shape[d] for d in dims),
            stride=tuple(self.stride[d] for d in dims),
        )

    def _regroup(self, shape: Sequence[int]) -> Layout | str:
        """ATen's computeStride: the view's layout, or why these strides cannot express `shape`.

        From the back, old dimensions that step evenly through storage form a chunk; each chunk
        must be covered exactly by whole new dimensions, which then step through it evenly."""
        new = _infer(shape, self.numel)
        if not self.shape:
            return replace(self, shape=new, stride=(1,) * len(new))
        if self.numel == 0:
            return replace(
                self, shape=new, stride=self.stride if new == self.shape else _row_major(new)
            )
        stride = [0] * len(new)
        v = len(new) - 1
        base, old_numel, new_numel = self.stride[-1], 1, 1
        chunk_end, new_end = len(self.shape), len(new)
        for d in reversed(range(len(self.shape))):
            old_numel *= self.shape[d]
            if d > 0 and (self.shape[d - 1] == 1 or self.stride[d - 1] == old_numel * base):
                continue
            while v >= 0 and (new_numel < old_numel or new[v] == 1):
                stride[v] = new_numel * base
                new_numel *= new[v]
                v -= 1
            if new_numel != old_numel:
                return (
                    f"sizes {self.shape[d - 1 : chunk_end]} with strides "
                    f"{self.stride[d - 1 : chunk_end]} cannot merge into "
                    f"{_grouping(new[v + 1 : new_end])}"
                )
            if d > 0:
                base, old_numel, new_numel = self.stride[d - 1], 1, 1
                chunk_end, new_end = d, v + 1
        return replace(self, shape=new, stride=tuple(stride))


def shown_positions(size: int, budget: int) -> list[int | None]:
    """The indices of one dimension to draw: all of them, or head and tail around a None gap."""
    if size <= budget:
        return list(range(size))
    head = (budget + 1) // 2
    tail = budget - head
    return [*range(head), None, *range(size - tail, size)]


def reached(layout: Layout, limit: int) -> dict[int, int] | None:
    """Storage element -> how many logical cells reach it; None when numel exceeds `limit`."""
    if layout.numel > limit:
        return None
    counts: dict[int, int] = {}
    for index in product(*(range(n) for n in layout.shape)):
        where = layout.storage_index(index)
        counts[where] = counts.get(where, 0) + 1
    return counts


def _wrap(dim: int, ndim: int) -> int:
    """`dim` counted from the front, as torch wraps it (a scalar accepts 0 and -1)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise ValueError(f"dimension {dim} is out of range for {ndim} dimensions")
    return dim % bound


def _clamp(bound: int | None, default: int, size: int) -> int:
    """A slice bound as torch clamps it into [0, size]."""
    if bound is None:
        return default
    return min(max(bound + size if bound < 0 else bound, 0), size)


def _infer(shape: Sequence[int], numel: int) -> Shape:
    """`shape` with its -1 (at most one) filled in to hold exactly `numel` elements."""
    shape = tuple(shape)
    if any(n < -1 for n in shape) or shape.count(-1) > 1:
        raise ValueError(f"invalid shape {shape}")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or numel % known:
            raise ValueError(f"cannot infer the -1 in {shape} for {numel} elements")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    if math.prod(shape) != numel:
        raise ValueError(f"shape {shape} is invalid for {numel} elements")
    return shape


def _row_major(shape: Shape) -> Strides:
    """The strides of a fresh contiguous tensor of this shape (size 0 and 1 step like size 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _grouping(sizes: Shape) -> str:
    """New dimensions in words: "8 rows of 3"."""
    if len(sizes) == 1:
        return f"one run of {sizes[0]}"
    if len(sizes) == 2:
        return f"{sizes[0]} rows of {sizes[1]}"
    return f"sizes {sizes}"
