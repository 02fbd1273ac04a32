"""Stable path for deployed courses' nbgrader_config.py; the plug-in lives in
`viewcopy.plugins.output_cap`."""

from viewcopy.plugins.output_cap import CapOutputs

__all__ = ["CapOutputs"]
