"""nbgrader's Execute with every kernel started in the sandbox (viewcopy.sandbox): what
`viewcopy grade` runs unless told --no-sandbox."""

from __future__ import annotations

from nbgrader.preprocessors import Execute
from traitlets import Enum

from viewcopy.course.folder import Course
from viewcopy.plugins.base import CoursePreprocessor
from viewcopy.sandbox import Limits, readable_paths
from viewcopy.sandbox.kernel_manager import SandboxedKernelManager

__all__ = ["SandboxedExecute", "SandboxedKernelManager", "sandbox_config"]


class SandboxedExecute(Execute, CoursePreprocessor):
    """nbgrader's Execute, with every kernel in the sandbox, ended at once when its last cell
    has run."""

    shutdown_kernel = Enum(
        ["graceful", "immediate"],
        default_value="immediate",
        help="How a kernel ends once the notebook has run: its sandbox is killed at once "
        "(nothing it holds is read after its last cell; a graceful end waited 220 ms a hand-in "
        "for ipykernel and the sandbox to wind down), or, 'graceful', it is asked to shut down.",
    ).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager
        super().__init__(*args, **kwargs)


def sandbox_config(config, course: Course, limits: Limits) -> None:
    """Switch an nbgrader config to sandboxed execution under `limits`."""
    steps = list(config.Autograde.get("autograde_preprocessors", []) or _default_steps())
    config.Autograde.autograde_preprocessors = [
        SandboxedExecute if step is Execute else step for step in steps
    ]
    config.SandboxedKernelManager.readable = readable_paths(course.data)
    config.SandboxedKernelManager.limits = dict(limits.__dict__)


def _default_steps():
    from nbgrader.converters import Autograde

    return Autograde.class_traits()["autograde_preprocessors"].default()
