"""Storage identity, the first witness, through references captured when viewcopy is imported.

The notebook imports viewcopy in its setup cell, before any student code runs, so a student who
later patches `torch.Tensor.untyped_storage` (or `isinstance`) cannot change what grading measures.
"""

from __future__ import annotations

import inspect

import torch

_is_tensor = torch.is_tensor
_untyped_storage = torch.Tensor.untyped_storage
_device = torch.Tensor.device.__get__
_storage_data_ptr = torch.UntypedStorage.data_ptr
_storage_nbytes = torch.UntypedStorage.nbytes
_storage_device = torch.UntypedStorage.device.__get__


def shares_memory(result: torch.Tensor, parent: torch.Tensor) -> bool:
    """True when `result` lives in the parent's memory: the same storage, or overlapping bytes.

    The same storage object is PyTorch's own identity (views share one StorageImpl, and its Python
    object is preserved); overlap is what memory shared through NumPy looks like (two storages over
    one buffer). Empty storages and `meta` ones have null pointers: only identity counts there.
    """
    mine, theirs = _untyped_storage(result), _untyped_storage(parent)
    if mine is theirs:
        return True
    if _device(result) != _device(parent) or _storage_device(mine).type == "meta":
        return False
    start, other = _storage_data_ptr(mine), _storage_data_ptr(theirs)
    size, other_size = _storage_nbytes(mine), _storage_nbytes(theirs)
    if not (start and other and size and other_size):
        return False
    return start < other + other_size and other < start + size


def verdict(result: object, parent: torch.Tensor) -> str:
    """'view' or 'copy' for a result that is a tensor; the same object counts as a view."""
    if not _is_tensor(result):
        raise TypeError(f"expected a tensor result, got {type(result).__name__}")
    return "view" if result is parent or shares_memory(result, parent) else "copy"


_CLASSES = {"torch.Tensor": torch.Tensor, "torch.UntypedStorage": torch.UntypedStorage}


def _resolved(cls: type) -> dict[str, object]:
    """Every attribute the class offers, as found through its MRO without running descriptors."""
    return {name: inspect.getattr_static(cls, name) for name in dir(cls)}


_ORIGINAL = {name: _resolved(cls) for name, cls in _CLASSES.items()}


def tampered() -> list[str]:
    """Attributes of torch.Tensor or torch.UntypedStorage rebound since viewcopy was imported."""
    changed = []
    for name, cls in _CLASSES.items():
        now = _resolved(cls)
        changed += [
            f"{name}.{key}"
            for key, value in _ORIGINAL[name].items()
            if now.get(key, None) is not value
        ]
    return changed
