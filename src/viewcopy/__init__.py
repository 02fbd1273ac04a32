"""View or copy: measure whether PyTorch operations return views or copies, and teach why.

The top level is the stable surface that released notebooks and deployed course configurations
name; the code lives in the layers below it (see ARCHITECTURE.md). Each name is imported from its
home the first time it is used, so `import viewcopy` loads no torch, pandas or matplotlib.
`viewcopy.__version__` is the installed package's version (pyproject.toml's; CHANGELOG.md).
"""

from __future__ import annotations

import importlib

from viewcopy.engine.version import lazy_names

HOMES = {
    "OPS": "viewcopy.exercise.catalogue",
    "PARENT_EXPR": "viewcopy.exercise.catalogue",
    "QUESTIONS": "viewcopy.exercise.catalogue",
    "VARIANTS": "viewcopy.exercise.catalogue",
    "LockError": "viewcopy.locking.file",
    "PredictionError": "viewcopy.exercise.part",
    "lock": "viewcopy.notebook",
    "lock_next": "viewcopy.notebook",
    "lock_production": "viewcopy.notebook",
    "reveal": "viewcopy.notebook",
    "reveal_next": "viewcopy.notebook",
}
"""Each public name and the module it lives in (`viewcopy.checks` is a module of its own)."""

__all__ = ["checks", *HOMES]


_lazy, _names = lazy_names(__name__, HOMES, globals())


def __getattr__(name: str):
    if name == "__version__":  # read from the package's metadata when asked (engine.version)
        from viewcopy.engine.version import package_version

        return package_version()
    if name == "checks":  # a module of its own
        return importlib.import_module("viewcopy.checks")
    return _lazy(name)


def __dir__() -> list[str]:
    return sorted({*_names(), "checks", "__version__"})
