"""What one measurement found: the verdict and every observation that decided or explains it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from viewcopy.engine.layout import Layout


class MeasurementDisagreement(RuntimeError):
    """Storage identity and the write-through probe gave different answers: never grade on that."""


@dataclass(frozen=True)
class Evidence:
    """One op applied to one parent on one device.

    `verdict` is `view` (the result shares the parent's storage; the same object counts),
    `copy` (the result owns new memory) or `error` (PyTorch refused; `message` says why).
    `write_through` is None when it cannot be probed (no elements, or no data, as on `meta`).
    """

    op: str
    parent: str
    device: str
    verdict: str
    item: int | None = None
    message: str = ""
    same_object: bool | None = None
    same_storage: bool | None = None
    same_data_ptr: bool | None = None
    write_through: bool | None = None
    bytes_allocated: int | None = None
    kernels: tuple[str, ...] = ()
    copy_kernels: tuple[str, ...] = ()
    parent_layout: Layout | None = None
    result_layout: Layout | None = None
    warnings: tuple[str, ...] = ()

    @property
    def stride(self) -> tuple[int, ...] | None:
        return self.result_layout.stride if self.result_layout else None

    @property
    def storage_offset(self) -> int | None:
        return self.result_layout.offset if self.result_layout else None

    def record(self) -> dict[str, object]:
        """A flat, JSON-ready dict: the fields the command line and the spreadsheet show."""
        result = self.result_layout
        return {
            "item": self.item,
            "op": self.op,
            "device": self.device,
            "parent": self.parent,
            "verdict": self.verdict,
            "message": self.message,
            "same_object": self.same_object,
            "same_storage": self.same_storage,
            "same_data_ptr": self.same_data_ptr,
            "write_through": self.write_through,
            "bytes_allocated": self.bytes_allocated,
            "copy_kernels": list(self.copy_kernels),
            "kernels": list(self.kernels),
            "shape": list(result.shape) if result else None,
            "stride": list(result.stride) if result else None,
            "storage_offset": result.offset if result else None,
            "is_contiguous": result.is_contiguous() if result else None,
            "dtype": result.dtype if result else None,
            "itemsize": result.itemsize if result else None,
            "logical_bytes": result.logical_bytes if result else None,
            "storage_bytes": result.storage_bytes if result else None,
            "parent_layout": asdict(self.parent_layout) if self.parent_layout else None,
            "warnings": list(self.warnings),
        }
