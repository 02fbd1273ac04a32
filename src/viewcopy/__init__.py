"""View or copy: measure whether PyTorch operations return views or copies, and teach why."""

from viewcopy import checks
from viewcopy.catalogue import OPS, PARENT_EXPR, QUESTIONS, VARIANTS
from viewcopy.lab import lock, reveal
from viewcopy.locking import LockError
from viewcopy.predictions import PredictionError

__all__ = [
    "OPS",
    "PARENT_EXPR",
    "QUESTIONS",
    "VARIANTS",
    "checks",
    "LockError",
    "PredictionError",
    "lock",
    "reveal",
]
