"""The class report split by its jobs (report.numbers, build, rows, summary, files) still answers
the names an instructor's copy of notebooks/class_report.ipynb from before the split imports, each
with a DeprecationWarning naming its home, until 1.0.0."""

from __future__ import annotations

import importlib

import pytest

import viewcopy.report.build
from viewcopy.report import rows, summary


def test_the_names_earlier_report_notebooks_import_are_the_report_s_own_and_warn():
    with pytest.warns(DeprecationWarning, match=r"report\.build\.table is deprecated.* 1\.0\.0"):
        assert viewcopy.report.build.table is rows.table
    with pytest.warns(DeprecationWarning, match="from viewcopy.report.rows import rows"):
        assert viewcopy.report.build.rows is rows.rows
    with pytest.warns(DeprecationWarning, match="from viewcopy.report.summary import"):
        assert viewcopy.report.build.terminal_summary is summary.terminal_summary
    with pytest.raises(AttributeError):
        viewcopy.report.build.no_such_name  # noqa: B018


def test_each_moved_name_lives_where_build_says():
    for name, home in viewcopy.report.build.MOVED.items():
        assert hasattr(importlib.import_module(f"viewcopy.report.{home}"), name)
