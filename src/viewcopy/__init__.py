"""View or copy: measure whether PyTorch operations return views or copies, and teach why."""

from viewcopy.catalogue import OPS, PARENT_EXPR, QUESTIONS, VARIANTS
from viewcopy.measure import measure, measure_item

__all__ = ["OPS", "PARENT_EXPR", "QUESTIONS", "VARIANTS", "measure", "measure_item"]
