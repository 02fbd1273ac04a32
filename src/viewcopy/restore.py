"""Stable path for deployed courses' nbgrader_config.py; the plug-in lives in
`viewcopy.plugins.restore`."""

from viewcopy.plugins.restore import RestoreMissingCells

__all__ = ["RestoreMissingCells"]
