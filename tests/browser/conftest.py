"""What the browser tests share: the student whose notebook they open, filled in."""

from __future__ import annotations

import nbformat
import pytest
from support.course_notebook import RELEASE, ROOT

from viewcopy.demo.synthetic import fill, synthetic_class


@pytest.fixture(scope="module")
def fifteen():
    """The synthetic student with 15/20 (misses measured, not typed) and a rule for every miss:
    diagrams to show."""
    return next(s for s in synthetic_class(ROOT) if s.student_id == "fifteen")


@pytest.fixture(scope="module")
def filled(fifteen):
    """The release notebook with the student's answer cells filled in."""
    notebook = nbformat.read(RELEASE, as_version=4)
    fill(notebook, fifteen.cells)
    return notebook
