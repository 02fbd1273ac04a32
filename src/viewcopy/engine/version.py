"""The package's own version: pyproject.toml's `version`, as the installed package's metadata
records it (semantic: CHANGELOG.md says what each release changed, for instructors).

It is read when asked, never at import: importlib.metadata costs tens of milliseconds that
`viewcopy --help` and `import viewcopy` do not pay. A lock (`locking.record.LockRecord.viewcopy`)
and a grading (`grading.record`'s `viewcopy` column) record it.
"""

from __future__ import annotations

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
