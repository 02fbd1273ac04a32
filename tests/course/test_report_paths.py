"""The class report split by its jobs (report.numbers, build, rows, summary, files) still answers
the names an instructor's copy of notebooks/class_report.ipynb from before the split imports."""

from __future__ import annotations

import importlib

import pytest

import viewcopy.report.build
from viewcopy.report import rows, summary


def test_the_names_earlier_report_notebooks_import_are_the_report_s_own():
    assert viewcopy.report.build.table is rows.table
    assert viewcopy.report.build.rows is rows.rows
    assert viewcopy.report.build.terminal_summary is summary.terminal_summary
    with pytest.raises(AttributeError):
        viewcopy.report.build.no_such_name  # noqa: B018


def test_each_moved_name_lives_where_build_says():
    for name, home in viewcopy.report.build.MOVED.items():
        assert hasattr(importlib.import_module(f"viewcopy.report.{home}"), name)
