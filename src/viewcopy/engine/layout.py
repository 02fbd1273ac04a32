"""A pure-Python model of a strided tensor: which storage element each logical index reaches.

No torch here: this is the model the diagrams draw from and the tests check torch against.
Everything is bounded by how many cells are asked for, never by the tensor's numel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product

Index = tuple[int, ...]


@dataclass(frozen=True)
class Layout:
    """Shape, strides and offset in elements, over a storage of `storage_numel` elements."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
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
