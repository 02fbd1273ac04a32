"""nbgrader's Execute with every kernel started in the sandbox (viewcopy.sandbox): what
`viewcopy grade` runs unless told --no-sandbox."""

from __future__ import annotations

from pathlib import Path

from nbgrader.preprocessors import Execute

from viewcopy.plugins.base import CoursePreprocessor
from viewcopy.sandbox import Limits, readable_paths
from viewcopy.sandbox.kernel_manager import SandboxedKernelManager

__all__ = ["SandboxedExecute", "SandboxedKernelManager", "sandbox_config"]


class SandboxedExecute(Execute, CoursePreprocessor):
    """nbgrader's Execute, with every kernel in the sandbox."""

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager
        super().__init__(*args, **kwargs)


def sandbox_config(config, course: Path, limits: Limits) -> None:
    """Switch an nbgrader config to sandboxed execution under `limits`."""
    steps = list(config.Autograde.get("autograde_preprocessors", []) or _default_steps())
    config.Autograde.autograde_preprocessors = [
        SandboxedExecute if step is Execute else step for step in steps
    ]
    config.SandboxedKernelManager.readable = readable_paths(course)
    config.SandboxedKernelManager.limits = dict(limits.__dict__)


def _default_steps():
    from nbgrader.converters import Autograde

    return Autograde.class_traits()["autograde_preprocessors"].default()
