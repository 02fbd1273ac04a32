"""A fresh Python in which importing torch, pandas or matplotlib fails: what runs there needs
none of them (tests/project/test_fast_start.py, and `viewcopy five` on a graded class)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "pandas", "matplotlib")
BLOCK = f"import sys\nfor name in {HEAVY!r}:\n    sys.modules[name] = None  # import fails\n"
"""Prepended to a child's code: importing torch, pandas or matplotlib raises ImportError."""


def without_heavy(code: str, *args: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh Python that cannot import torch, pandas or matplotlib."""
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code, *args], capture_output=True, text=True, timeout=300
    )


def viewcopy_without_heavy(*args: str) -> subprocess.CompletedProcess:
    """The `viewcopy` command, run where torch, pandas and matplotlib cannot be imported."""
    return without_heavy("from viewcopy.cli import main\nsys.exit(main(sys.argv[1:]))", *args)
