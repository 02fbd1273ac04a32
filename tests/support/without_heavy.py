"""A fresh Python in which importing torch, pandas or matplotlib fails: what runs there needs
none of them (tests/project/test_fast_start.py, and `viewcopy five` on a graded class)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "pandas", "matplotlib")
BLOCK = f"""import sys


class Absent:
    \"\"\"Finds the blocked packages nowhere, as where they are not installed (sys.modules
    stays without them: libraries probe it).\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None


sys.meta_path.insert(0, Absent())
"""
"""Prepended to a child's code: importing torch, pandas or matplotlib fails, as if not installed."""


def without_heavy(code: str, *args: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh Python that cannot import torch, pandas or matplotlib."""
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code, *args], capture_output=True, text=True, timeout=300
    )


def viewcopy_without_heavy(*args: str) -> subprocess.CompletedProcess:
    """The `viewcopy` command, run where torch, pandas and matplotlib cannot be imported."""
    return without_heavy("from viewcopy.cli import main\nsys.exit(main(sys.argv[1:]))", *args)
