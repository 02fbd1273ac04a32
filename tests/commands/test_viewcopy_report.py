"""`viewcopy report` on the session's graded class: it says how many students and what passed,
writes the CSV and every figure beside the course and exits 0; a folder that is not a graded
course is one clear error. The report's numbers themselves: tests/course/test_report.py."""

from __future__ import annotations

import re

import pytest
from support.course_notebook import ROOT

from viewcopy import cli
from viewcopy.demo.synthetic import synthetic_class
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
    assert out.rstrip().endswith(f"open {folder / 'report.html'}")
    assert (folder / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_the_report_command_names_three_items_and_the_pair_to_look_at(cycle, capsys):
    course, _ = cycle
    assert cli.main(["report", "--course", str(course), "--out", str(course / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    (worth,) = [line for line in lines if line.startswith("worth a look: ")]
    assert worth.count("`") == 6, worth  # three items, each with its expression
    (alike,) = [line for line in lines if line.startswith("hand-ins that look alike: ")]
    listed = re.findall(r"(\w+) and (\w+) \(\d+%\)", alike)
    honest = {s.student_id for s in synthetic_class(ROOT)} - {"renamed"}
    # the copying pair is listed; of the synthetic class's own students no other pair is (the
    # session's tampered hand-ins repeat a profile's cells word for word, and are listed too)
    assert {"fifteen", "renamed"} in [set(pair) for pair in listed], alike
    assert [p for p in listed if set(p) <= honest | {"renamed"}] in (
        [("fifteen", "renamed")],
        [("renamed", "fifteen")],
    ), alike
