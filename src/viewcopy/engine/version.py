"""The package's own version: pyproject.toml's `version`, as the installed package's metadata
records it (semantic: CHANGELOG.md says what each release changed, for instructors).

It is read when asked, never at import: importlib.metadata costs tens of milliseconds that
`viewcopy --help` and `import viewcopy` do not pay. A lock (`locking.record.LockRecord.viewcopy`)
and a grading (`grading.record`'s `viewcopy` column) record it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache

DISTRIBUTION = "viewcopy"
UNKNOWN = "0+unknown"
"""The version of a package run from its source without being installed (no metadata to read)."""


@cache
def package_version() -> str:
    """The running package's version ("0.2.0"), or UNKNOWN where it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return UNKNOWN


REMOVED_IN = "1.0.0"
"""The next major version: the deprecated stable paths (`viewcopy.feedback`, `viewcopy.output_cap`,
`viewcopy.restore`, `viewcopy.trusted`) go in it, and keep loading until then."""


def deprecated_path(
    path: str, names: list[str], replacement: str | Mapping[str, str] = "viewcopy.plugins"
):
    """A deprecated module's `__getattr__` and `__dir__` (with a mapping: a module's deprecated
    names'): each of `names` taken from `path` warns (a DeprecationWarning naming its replacement
    module, at the line that imports it, every time) and is that module's own object.
    `replacement`: one module for all (the whole module is deprecated), or each name's."""

    def home(name: str) -> str:
        return replacement if isinstance(replacement, str) else replacement[name]

    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {path!r} has no attribute {name!r}")
        import warnings

        deprecated = path if isinstance(replacement, str) else f"{path}.{name}"
        warnings.warn(
            f"{deprecated} is deprecated and goes in viewcopy {REMOVED_IN}: import {name} from "
            f"{home(name)} instead (from {home(name)} import {name})",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home(name)), name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__


def lazy_names(path: str, homes: Mapping[str, str], namespace: dict):
    """A stable path's `__getattr__` and `__dir__`: each name of `homes` (name -> the module it
    lives in) imported from there when first used, then kept in `namespace` (the module's
    globals), so importing the stable path imports none of them."""

    def __getattr__(name: str):
        if name not in homes:
            raise AttributeError(f"module {path!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(homes[name]), name)
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
