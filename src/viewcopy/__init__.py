"""View or copy: measure whether PyTorch operations return views or copies, and teach why.

The top level is the stable surface that released notebooks and deployed course configurations
name; the code lives in the layers below it (see ARCHITECTURE.md).
"""

from viewcopy import checks
from viewcopy.exercise.catalogue import OPS, PARENT_EXPR, QUESTIONS, VARIANTS
from viewcopy.exercise.locking import LockError
from viewcopy.exercise.predictions import PredictionError
from viewcopy.notebook import lock, lock_next, lock_production, reveal, reveal_next

__all__ = [
    "OPS",
    "PARENT_EXPR",
    "QUESTIONS",
    "VARIANTS",
    "checks",
    "LockError",
    "PredictionError",
    "lock",
    "lock_next",
    "lock_production",
    "reveal",
    "reveal_next",
]
