"""The stable path released notebooks import the diagram explorer from
(`from viewcopy.explorer import explorer`); it lives in `viewcopy.display.explorer`."""

from viewcopy.display.explorer import explorer

__all__ = ["explorer"]
