"""Whatever a student writes is text wherever the package builds HTML or SVG: a hostile string fed
through every field a student controls comes out as visible text, never as a tag or a handler."""

from __future__ import annotations

import html.parser
from pathlib import Path

import pytest
from support.payloads import active_content, img

import viewcopy
from viewcopy import notebook as lab
from viewcopy.course.folder import Course
from viewcopy.display.explorer import Explorer
from viewcopy.display.production_sheet import ProductionSheet
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.production_model import forward_listing
from viewcopy.five.board import GroupRow
from viewcopy.five.groups import AnswerGroup
from viewcopy.five.questions import CourseQuestion
from viewcopy.instructor.master import measured_next_predictions, measured_predictions
from viewcopy.locking.flow import LockStatus
from viewcopy.notebook import checks
from viewcopy.notebook.cases import Case

EVIL = img("escaped") + '<script>alert(1)</script><svg onload="alert(1)">'


class _Text(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def shown_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    return "".join(parser.parts)


def assert_shown_as_text(markup: str, evil: str = EVIL) -> None:
    assert active_content(markup) == [], active_content(markup)
    assert evil in shown_text(markup)  # still there, for the reader to see


@pytest.fixture
def html_displays(monkeypatch):
    """Every HTML a check displays (a diagram of each miss), kept to be inspected."""
    shown: list[str] = []
    monkeypatch.setattr(checks, "_display_html", shown.append)
    return shown


def test_rules_in_predictions_are_text_in_the_lock_and_reveal_tables(workdir, monkeypatch):
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    sheet = {item: (verdict, f"{rule} {EVIL}") for item, (verdict, rule) in
             measured_predictions().items()}  # fmt: skip
    assert_shown_as_text(viewcopy.lock(sheet)._repr_html_())
    assert_shown_as_text(viewcopy.reveal(sheet)._repr_html_())


def test_rules_in_next_predictions_are_text_in_their_tables(revealed):
    sheet = measured_next_predictions(lab.next_ops())
    first, (verdict, _) = next(iter(sheet.items()))
    wrong = "copy" if verdict == "view" else "view"
    hostile = {**{i: (v, f"{r} {EVIL}") for i, (v, r) in sheet.items()}, first: (wrong, EVIL)}
    assert_shown_as_text(lab.lock_next(hostile)._repr_html_())
    revealed_html = lab.reveal_next(hostile)._repr_html_()
    assert_shown_as_text(revealed_html)
    assert "<svg" in revealed_html  # the miss's diagram is drawn beside the escaped rule


def test_production_answers_are_text_in_the_production_table():
    answers = {n: Prediction(f"no copy {EVIL}", "") for n, _ in forward_listing()}
    sheet = ProductionSheet(answers, LockStatus("locked", "Locked."))
    assert_shown_as_text(sheet._repr_html_())


def test_rules_after_and_the_five_are_printed_and_never_displayed_as_html(
    revealed, html_displays, capsys
):
    right = measured_predictions()
    wrong = {**right, 1: ("copy" if right[1][0] == "view" else "view", EVIL)}
    checks.rules_after_credit(wrong, {1: EVIL})
    checks.specificity_credit(f"the storage is shared {EVIL}", item=21)
    checks.prediction_credit(wrong)
    assert html_displays  # the miss's diagram: the only HTML these checks show
    for markup in html_displays:
        assert active_content(markup) == [] and "onerror" not in markup
    assert "onerror" in capsys.readouterr().out  # the student's words, printed as text


def test_what_classify_returns_or_raises_is_printed_as_text(revealed, html_displays, capsys):
    cases = [Case("a transpose", "torch.arange(24.).reshape(4, 6)", "x.t()")]

    def returns(op_result, parent):
        return EVIL

    def raises(op_result, parent):
        raise RuntimeError(EVIL)

    for classify in (returns, raises):
        assert checks.classify_credit(classify, cases, points=1) == 0
    assert html_displays == []
    assert capsys.readouterr().out.count("onerror") == 2


def test_an_expression_typed_in_the_explorer_is_text_in_its_status_and_diagram():
    typed = '<img src=x onerror="alert(1)"><script>alert(1)</script>'  # no quote to escape
    shown = Explorer(("cpu",))
    shown.expression.value = f"x.t() if '{typed}' else x"
    for markup in (shown.status.value, shown.picture.value, shown.static_fallback()):
        assert_shown_as_text(markup, typed)  # the diagram's title names the expression
    shown.expression.value = f"x.{EVIL}"
    assert active_content(shown.status.value) == [] and "onerror" in shown_text(shown.status.value)


def test_an_answer_group_is_text_on_the_grading_board(tmp_path: Path):
    group = AnswerGroup(21, "g1", (f"student{EVIL}",), f"storage {EVIL}")
    question = CourseQuestion(21, "What is a view?", "Rubric.", 2.0, (group,), {})
    assert_shown_as_text(
        GroupRow(Course.at(tmp_path), "view_or_copy", question, group).answer.value
    )
