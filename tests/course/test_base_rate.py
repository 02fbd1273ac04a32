"""A score that means what it says: the base rate is measured and stated, a constant sheet is told
it is no better, and the course chooses the card's line or the balanced score, applied alike by
graded kernels, the grader's own verdict, `viewcopy grade` and plain `nbgrader autograde`.
Expected numbers come from NumPy's oracle of the twenty on x, never from a typed key."""

from __future__ import annotations

from collections import Counter

import nbformat
import pytest
from support.oracles import numpy_oracle
from support.sandboxing import grade_as_the_product
from support.the_class import constant, course_of

import viewcopy
from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    grade_id,
    read_grades,
    run_nbgrader,
)
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.predictions import parse_predictions
from viewcopy.exercise.scoring import BALANCED, CARD, PASS_MARK, PASS_SHARE, score_sheet
from viewcopy.instructor.master import measured_predictions
from viewcopy.notebook import checks
from viewcopy.report.build import build_report

pytestmark = [pytest.mark.course, pytest.mark.sandbox]

ON_X = {op.item: numpy_oracle(op.expr, catalogue.PARENT_EXPR) for op in catalogue.OPS}
"""The twenty's verdicts on x, by NumPy's oracle."""


def oracle_scores(sheet: dict) -> tuple[int, float]:
    """Right (plain verdicts against x; 'sometimes' sheets are the master's, all right), and the
    balanced score: the mean over x's verdicts of the share of those items right."""
    right = {i: v == ON_X[i] or v.startswith("sometimes") for i, (v, _) in sheet.items()}
    classes = {v: [right[i] for i in ON_X if ON_X[i] == v] for v in set(ON_X.values())}
    return sum(right.values()), sum(sum(c) / len(c) for c in classes.values()) / len(classes)


def credit(sheet: dict, policy: str, points: float = 5) -> float:
    right, balanced = oracle_scores(sheet)
    share = min(right, PASS_MARK) / PASS_MARK if policy == CARD else min(balanced, 0.8) / 0.8
    return round(points * share, 4)


PLAIN = "plain"
"""The course plain `nbgrader autograde` grades, under the balanced policy."""

SHEETS = {
    "all_view": constant("view"),
    "all_copy": constant("copy"),
    "perfect": measured_predictions(),
}


def test_the_base_rate_is_measured_and_a_constant_view_sheet_is_exactly_it():
    table = measured_truth(("cpu",))
    verdict, count = Counter(ON_X.values()).most_common(1)[0]
    score = score_sheet(parse_predictions(constant(verdict)), table, policy=CARD)
    assert (score.base.verdict, score.base.count) == (verdict, count)
    assert score.correct == count and score.constant and score.no_better_than_base
    assert f"{count} of the 20 are {verdict}s here" in score.sentence()
    assert "no better than answering" in score.sentence() and "next op" in score.sentence()


@pytest.mark.parametrize("policy", [CARD, BALANCED])
@pytest.mark.parametrize("name", list(SHEETS))
def test_each_policy_credits_the_sheets_as_the_oracle_says(name, policy):
    table = measured_truth(("cpu",))
    score = score_sheet(parse_predictions(SHEETS[name]), table, policy=policy)
    right, balanced = oracle_scores(SHEETS[name])
    assert (score.correct, score.balanced) == (right, pytest.approx(balanced))
    assert round(5 * score.share, 4) == credit(SHEETS[name], policy)
    if name == "perfect":
        assert score.share == 1 and not score.no_better_than_base
    else:
        assert score.balanced == pytest.approx(0.5) and score.no_better_than_base


def test_under_the_balanced_policy_a_constant_sheet_does_not_pass(workdir, monkeypatch, capsys):
    monkeypatch.setenv("VIEWCOPY_SCORING", BALANCED)
    viewcopy.lock(SHEETS["all_view"])
    revealed = viewcopy.reveal(SHEETS["all_view"])
    assert not revealed.score.passed and "does not pass the balanced 80% line" in (
        revealed.headline()
    )
    assert (
        checks.prediction_credit(SHEETS["all_view"], points=5)
        == credit(SHEETS["all_view"], BALANCED)
        < 5
    )
    said = capsys.readouterr().out
    assert "Credited by the balanced score" in said and "no better than answering" in said
    assert PASS_SHARE == 0.8


@pytest.fixture(scope="module")
def graded(the_class, tmp_path_factory):
    """The three sheets' hand-ins of the session's class, graded under each policy (and by plain
    nbgrader under the balanced one)."""
    root = tmp_path_factory.mktemp("base-rate")
    courses = {name: course_of(the_class, root / name, SHEETS) for name in (CARD, BALANCED, PLAIN)}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("VIEWCOPY_SCORING", CARD)
        grade_as_the_product(courses[CARD])
        env.setenv("VIEWCOPY_SCORING", BALANCED)
        grade_as_the_product(courses[BALANCED])
        run_nbgrader(courses[PLAIN], "autograde", ASSIGNMENT, "--force")
        reports = {BALANCED: build_report(courses[BALANCED])}
    reports[CARD] = build_report(courses[CARD])
    return courses, reports


@pytest.mark.parametrize("policy", [CARD, BALANCED])
def test_graded_credit_follows_the_course_s_policy(graded, policy):
    courses, _ = graded
    grades = read_grades(courses[policy])
    for name, sheet in SHEETS.items():
        assert grades[name]["score_predictions"][0] == pytest.approx(credit(sheet, policy)), name
    assert grades["perfect"]["score_predictions"][0] == 5


def test_plain_nbgrader_autograde_applies_the_same_policy(graded):
    courses, _ = graded
    assert read_grades(courses[PLAIN]) == read_grades(courses[BALANCED])


def test_the_feedback_says_which_policy_applied_and_names_the_base_rate(graded):
    courses, _ = graded
    for policy, words in ((CARD, "lab card's line"), (BALANCED, "balanced score")):
        path = courses[policy] / "autograded" / "all_view" / ASSIGNMENT / NOTEBOOK
        (cell,) = [c for c in nbformat.read(path, 4).cells if grade_id(c) == "score_predictions"]
        said = "".join(o.get("text", "") for o in cell.outputs)
        assert f"Credited by the {words}" in said and "no better than answering" in said


def test_the_report_flags_constant_sheets_and_shows_the_balanced_score(graded):
    _, reports = graded
    for policy, report in reports.items():
        lines = {s.student: s for s in report.students}
        assert lines["all_view"].flag == lines["all_copy"].flag == "constant", policy
        assert lines["perfect"].flag == "" and lines["perfect"].balanced == 1
        assert lines["all_view"].balanced == pytest.approx(0.5)
        assert lines["perfect"].passes and report.scoring == policy
    views = Counter(ON_X.values())["view"]
    all_view = {
        policy: {s.student: s for s in r.students}["all_view"] for policy, r in reports.items()
    }
    assert all_view[CARD].passes == (views >= PASS_MARK) and not all_view[BALANCED].passes
