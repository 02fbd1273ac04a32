"""`viewcopy report` on the session's graded class: it says how many students and what passed,
writes the CSV and every figure beside the course and exits 0; a folder that is not a graded
course is one clear error. The report's numbers themselves: tests/course/test_report.py."""

from __future__ import annotations

import pytest

from viewcopy import cli
from viewcopy.report.files import FIGURES

pytestmark = [pytest.mark.course]

PNG = b"\x89PNG\r\n\x1a\n"
"""The PNG signature, the first eight bytes of every PNG file."""


def test_a_folder_that_is_not_a_graded_course_is_an_error(tmp_path, capsys):
    assert cli.main(["report", "--course", str(tmp_path)]) == cli.USAGE_ERROR
    assert "not graded yet" in capsys.readouterr().err


def test_the_report_command_writes_beside_the_course_and_exits_0(cycle, capsys):
    course, results = cycle
    assert cli.main(["report", "view_or_copy", "--course", str(course)]) == 0
    out = capsys.readouterr().out
    assert f"{len(results)} students" in out and "pass 16/20" in out
    folder = course / "reports" / "view_or_copy"
    assert (folder / "report.csv").is_file()
    assert all((folder / f"{name}.png").read_bytes().startswith(PNG) for name in FIGURES)
