"""Stable path for deployed courses' nbgrader_config.py; the plug-ins live in
`viewcopy.plugins.feedback`."""

from viewcopy.plugins.feedback import HideHiddenTests, StaticWidgets

__all__ = ["HideHiddenTests", "StaticWidgets"]
