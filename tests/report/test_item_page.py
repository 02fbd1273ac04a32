"""The item analysis as people read it: the page escapes what students wrote and gives every
figure its text alternative, the terminal names the items most worth a look, and the CSV holds
every new number. Built from a ClassReport made here (no course, no torch measurement)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from support.report_page import Page

from viewcopy.course.handin import LOCKED
from viewcopy.report.distributions import part_distributions, text_alternative
from viewcopy.report.files import write_report
from viewcopy.report.item_statistics import ItemStatistics
from viewcopy.report.item_words import FLAGGED, worth_a_look, worth_a_look_line
from viewcopy.report.numbers import (
    NEXT_ITEMS,
    TWENTY_ITEMS,
    ClassReport,
    ItemAnalysis,
    PartDistribution,
    Reliability,
    StudentLine,
)
from viewcopy.report.summary import terminal_summary

HOSTILE = '<script>alert("rule")</script> & <img src=x onerror=alert(1)>'


def item(key: str, r: float | None, part: str = TWENTY_ITEMS, rules=()) -> ItemAnalysis:
    why = "" if r is not None else "everyone got it right: no variance to correlate"
    stats = ItemStatistics(30, 30 if r is None else 18, r, None if r is None else r, why)
    return ItemAnalysis(part, key, f"x.op_{key[-1]}()", stats, "view", 12, tuple(rules))


ITEMS = (
    item("item 1", 0.45),
    item("item 2", 0.12, rules=(HOSTILE, "strides change")),
    item("item 3", -0.21),
    item("item 4", None),
    item("item 5", 0.31),
    item("N07", -0.05, NEXT_ITEMS),
)


def student(name: str, scores: dict[str, float | None]) -> StudentLine:
    maxima = {"score_predictions": 5.0, "answer_21": 2.0, "specific_21": 1.0}
    grades = {cell: (score, maxima[cell]) for cell, score in scores.items()}
    return StudentLine(name, LOCKED, 20, 20, grades, {}, ())


STUDENTS = (
    student("a", {"score_predictions": 5.0, "answer_21": 2.0, "specific_21": 1.0}),
    student("b", {"score_predictions": 3.5, "answer_21": None, "specific_21": 0.0}),
    student("c", {"score_predictions": 0.0, "answer_21": 1.0, "specific_21": 1.0}),
)


def class_report(tmp_path: Path) -> ClassReport:
    from viewcopy.exercise.graded_parts import GRADED_PARTS

    return ClassReport(
        assignment="view_or_copy",
        course=tmp_path,
        devices=("cpu",),
        torch="2.x",
        students=STUDENTS,
        judged=30,
        misconceptions=(),
        classify_runs={},
        traps=(),
        specificity=(),
        items=ITEMS,
        reliability=Reliability(30, 20, 0.8123),
        distributions=part_distributions(STUDENTS, GRADED_PARTS),
    )


def test_worth_a_look_is_the_flagged_most_negative_first_then_the_lowest():
    assert [a.key for a in worth_a_look(ITEMS)] == ["item 3", "N07", "item 2"]
    assert [a.key for a in worth_a_look(ITEMS[:1] + ITEMS[3:5])] == ["item 5", "item 1"]
    line = worth_a_look_line(ITEMS)
    assert line.startswith(
        "worth a look: item 3 `x.op_3()` (point-biserial -0.21: stronger students miss it more)"
    )
    assert "item 4" not in line, "no discrimination measured: nothing to rank"


def test_each_part_s_scores_are_grouped_as_the_course_parts_and_said_in_words():
    from viewcopy.exercise.graded_parts import GRADED_PARTS

    found = {d.part: d for d in part_distributions(STUDENTS, GRADED_PARTS)}
    assert found["predictions"].scores == (5.0, 3.5, 0.0)
    assert found["the dangerous five"] == PartDistribution("the dangerous five", 3.0, (3.0, 2.0), 1)
    assert [count for _, _, count in found["predictions"].bins] == [1, 0, 0, 1, 1]
    said = text_alternative(found["predictions"])
    assert said == (
        "predictions: scores of 3 student(s), out of 5 points (median 3.5). Students per score: "
        "0 to under 1: 1; 1 to under 2: 0; 2 to under 3: 0; 3 to under 4: 1; 4 to 5: 1."
    )
    assert "1 still wait for a score" in text_alternative(found["the dangerous five"])


def test_the_page_escapes_rules_and_every_figure_has_its_text_alternative(tmp_path):
    report = class_report(tmp_path)
    written = write_report(report, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    parsed = Page()
    parsed.feed(page)
    assert parsed.scripts == 0 and "<script>" not in page
    assert HOSTILE in "".join(parsed.text), "the rule is shown, as text"
    assert len(parsed.images) == len(report.distributions) == 2  # predictions, the five
    assert all(i["src"].startswith("data:image/png;base64,") for i in parsed.images)
    assert [i["alt"] for i in parsed.images] == [text_alternative(d) for d in report.distributions]
    assert {p.name for p in written} >= {"report.html", "distribution_1_predictions.png"}
    assert "−0.21" in page or "-0.21" in page
    assert FLAGGED in page and "everyone got it right: no variance to correlate" in page
    assert "KR-20 of the twenty: 0.81" in page and "60%" in page and "nan" not in page.lower()


def test_the_csv_holds_every_item_the_kr20_and_each_distribution(tmp_path):
    report = class_report(tmp_path)
    write_report(report, tmp_path)
    with (tmp_path / "report.csv").open(newline="", encoding="utf-8") as handle:
        values = {
            (r["section"], r["key"], r["measure"]): r["value"] for r in csv.DictReader(handle)
        }
    for a in ITEMS:
        stats = a.statistics
        assert float(values["items", a.key, "share_right"]) == pytest.approx(stats.share_right)
        assert values["items", a.key, "flag"] == str(int(a.flagged))
        assert values["items", a.key, "common_wrong"] == "view"
        r = values["items", a.key, "point_biserial"]
        assert (r == "") if stats.point_biserial is None else float(r) == stats.point_biserial
    assert values["items", "item 4", "no_discrimination"].startswith("everyone got it right")
    assert values["class", "view_or_copy", "kr20"] == "0.8123"
    assert values["distribution", "predictions", "0-1"] == "1"
    assert not any(re.search(r"\bnan\b", v, re.I) for v in values.values())


def test_the_terminal_names_the_items_worth_a_look_and_the_kr20(tmp_path):
    summary = terminal_summary(class_report(tmp_path))
    assert "worth a look: item 3 `x.op_3()` (point-biserial -0.21" in summary
    assert "KR-20 of the twenty: 0.81 over 30 students judged" in summary
