"""Deprecated, removed in 1.0.0: the diagrams live in `viewcopy.display.diagram` (and its sibling
modules). Copies of notebooks/stride_explorer.ipynb from earlier releases import `Diagram` from
here; each name warns and is `viewcopy.display.diagram`'s own object."""

from viewcopy.engine.version import deprecated_path as _deprecated_path

MOVED = {"Diagram": "viewcopy.display.diagram", "render_svg": "viewcopy.display.diagram"}
__getattr__, __dir__ = _deprecated_path(__name__, list(MOVED), MOVED)
