"""The torch versions this lab is tested on (scripts/torch_matrix.sh), and what is said below them.

FLOOR is the oldest minor release that passes. Tried here: on torch 2.3 and older the profiler
puts a kernel outside its parent (it ends a microsecond after it) in one profile of
`x.t().contiguous()` in five to ten, so a copy's bytes count twice and copies are charged to the
wrong line; 2.2 and older also cannot use NumPy 2, which pip pairs with them. pyproject.toml and
environment.yml say the same floor (tests/engine/test_torch_range.py).
"""

from __future__ import annotations

import re

import torch

FLOOR = (2, 4)


def floor_text() -> str:
    return ".".join(map(str, FLOOR))


def below_floor(version: str | None = None) -> str | None:
    """One line saying to upgrade when `version` (default: this torch) is older than FLOOR."""
    version = str(torch.__version__ if version is None else version)
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    if numbers >= FLOOR:
        return None
    return (
        f"torch {version} is older than this lab supports ({floor_text()} or newer): upgrade "
        f"it (pip install -U 'torch>={floor_text()}') and restart the kernel"
    )
