"""The item analysis on the session's graded class, against what the synthetic students' own
profiles give: each profile's predictions before looking (as test_report reads them) judged
against the master's measured predictions, correlated by scipy, never by the report's code."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from scipy import stats
from support.course_notebook import RELEASE
from support.report_page import Page
from support.the_class import predicted_before_looking

from viewcopy.course.assignment import NOTEBOOK
from viewcopy.demo.synthetic import fill, predictions_source
from viewcopy.exercise import catalogue
from viewcopy.exercise.predictions import TWENTY as TWENTY_PART
from viewcopy.exercise.predictions import parse_predictions
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.flow import write_lock
from viewcopy.report.build import build_report
from viewcopy.report.files import write_report
from viewcopy.report.numbers import TWENTY_ITEMS
from viewcopy.report.summary import terminal_summary

pytestmark = [pytest.mark.course]


@pytest.fixture(scope="module")
def graded(cycle):
    course, results = cycle
    return course, results, build_report(course)


def profiles_matrix(results) -> np.ndarray:
    """Students x the twenty: 1 where the profile's prediction before looking is right."""
    right = {item: verdict for item, (verdict, _) in measured_predictions().items()}
    sheets = [b for r in results.values() if (b := predicted_before_looking(r.student))]
    return np.array([[float(s[i] == right[i]) for i in catalogue.ITEMS] for s in sheets])


def test_each_item_s_share_right_and_point_biserial_are_the_profiles(graded):
    _, results, report = graded
    matrix = profiles_matrix(results)
    rest = matrix.sum(axis=1, keepdims=True) - matrix
    twenty = [a for a in report.items if a.part == TWENTY_ITEMS]
    assert [a.key for a in twenty] == [f"item {i}" for i in catalogue.ITEMS]
    assert report.reliability.students == len(matrix) == report.judged
    for column, a in enumerate(twenty):
        assert a.statistics.students == len(matrix)
        assert a.statistics.share_right == pytest.approx(matrix[:, column].mean())
        constant = matrix[:, column].std() == 0 or rest[:, column].std() == 0
        if constant:
            assert a.statistics.point_biserial is None and a.statistics.why, a.key
            continue
        expected = stats.pointbiserialr(matrix[:, column], rest[:, column]).statistic
        assert a.statistics.point_biserial == pytest.approx(expected, abs=1e-9), a.key
    assert any(a.statistics.point_biserial is not None for a in twenty)
    next_ops = [a for a in report.items if a.part != TWENTY_ITEMS]
    assert next_ops and all(a.statistics.students <= report.judged for a in next_ops)


def test_the_csv_holds_the_item_rows_and_the_summary_names_what_is_worth_a_look(graded, tmp_path):
    _, _, report = graded
    write_report(report, tmp_path)
    with (tmp_path / "report.csv").open(newline="", encoding="utf-8") as handle:
        values = {
            (r["section"], r["key"], r["measure"]): r["value"] for r in csv.DictReader(handle)
        }
    for a in report.items:
        share = float(values["items", a.key, "share_right"])
        assert share == pytest.approx(a.statistics.share_right, abs=1e-4)
        assert values["items", a.key, "flag"] == str(int(a.flagged))
    assert ("class", report.assignment, "kr20") in values
    assert {k for s, k, _ in values if s == "distribution"} == {
        d.part for d in report.distributions
    }
    assert "worth a look: " in terminal_summary(report)


def test_the_page_of_the_graded_class_gives_every_figure_its_alt_text(graded, tmp_path):
    _, _, report = graded
    write_report(report, tmp_path)
    page = Page()
    page.feed((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert page.images and len(page.images) == len(report.distributions)
    assert all(image.get("alt", "").strip() for image in page.images)
    assert page.scripts == 0


HOSTILE = "<script>alert('rule')</script>"


def test_a_rule_with_a_script_tag_is_text_on_the_page(tmp_path):
    """A hand-made folder whose locked predictions miss item 3 with a hostile rule."""
    right = measured_predictions()
    verdict = "copy" if right[3][0] == "view" else "view"
    sheets = {
        "hostile": {**right, 3: (verdict, HOSTILE)},
        **{f"s{n}": right for n in range(3)},
    }
    for student, sheet in sheets.items():
        folder = tmp_path / "submitted" / student / "view_or_copy"
        folder.mkdir(parents=True)
        notebook = nbformat.read(RELEASE, as_version=4)
        fill(notebook, {"predictions": predictions_source(sheet)})
        nbformat.write(notebook, folder / NOTEBOOK)
        write_lock(TWENTY_PART, parse_predictions(sheet), folder)
    report = build_report(tmp_path)
    item = next(a for a in report.items if a.key == "item 3")
    assert (item.wrong_verdict, item.rules) == (verdict, (HOSTILE,))
    assert item.statistics.point_biserial is None and "too few" in item.statistics.why
    write_report(report, tmp_path / "out")
    text = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    assert page.scripts == 0 and HOSTILE in "".join(page.text)
    assert not re.search(r"\bnan\b", "".join(page.text), re.IGNORECASE)
    assert Path(tmp_path / "out" / "report.csv").is_file()
