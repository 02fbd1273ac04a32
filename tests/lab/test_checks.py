"""The graded cells' functions, in process: credit, reasons, silence, and the classify traps."""

from __future__ import annotations

import re

import pytest
import torch
from support.course_notebook import hidden_traps
from support.oracles import TWENTY, expected_credit, student_classify

import viewcopy
from viewcopy.demo.classifiers import CLASSIFIERS
from viewcopy.demo.synthetic import wrong_on
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.gate import TRUTH_FIRST
from viewcopy.notebook import checks
from viewcopy.notebook.context import CheckContext, local_lock

TRAPS = [c for c in hidden_traps() if c.device == "cpu"]


def test_there_are_at_least_twelve_traps_beyond_the_twenty():
    assert len(TRAPS) >= 12
    assert not {(c.parent, c.op) for c in TRAPS} & {(c.parent, c.op) for c in TWENTY}


def test_the_correct_classifier_gets_all_the_credit(revealed, capfd):
    classify = student_classify("storage")
    assert checks.classify_credit(classify, TWENTY, points=3) == 3
    assert checks.classify_credit(classify, TRAPS, points=5) == 5
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("kind", ["data_ptr", "base", "storage_pointer"])
def test_folklore_classifiers_lose_hidden_credit_exactly_as_measured(kind, revealed, capfd):
    classify = student_classify(kind)
    credit = checks.classify_credit(classify, TRAPS, points=5)
    assert credit == expected_credit(classify, TRAPS, 5) < 5
    assert checks.classify_credit(classify, TWENTY, points=3) == expected_credit(
        classify, TWENTY, 3
    )
    out, err = capfd.readouterr()
    assert "measured" in out and err == ""


def test_a_crashing_classifier_gets_nothing_and_is_told_why(revealed, capfd):
    assert checks.classify_credit(student_classify("crash"), TRAPS, points=5) == 0
    assert "raised RuntimeError: not finished yet" in capfd.readouterr().out


def test_answers_other_than_view_or_copy_are_wrong(revealed, capfd):
    assert checks.classify_credit(lambda r, p: "View", TWENTY[:2], points=2) == 0
    assert "returned 'View', not 'view' or 'copy'" in capfd.readouterr().out


def test_a_noisy_classifier_keeps_stderr_silent(revealed, capfd):
    def noisy(result, parent):
        import sys
        import warnings

        warnings.warn("deprecated!", stacklevel=1)
        print("debug", file=sys.stderr)
        return "view" if result.untyped_storage() is parent.untyped_storage() else "copy"

    assert checks.classify_credit(noisy, TWENTY, points=3) == 3
    out, err = capfd.readouterr()
    assert err == "" and "classify wrote to stderr" in out


def test_a_patched_torch_earns_no_classify_credit(revealed, monkeypatch, capfd):
    monkeypatch.setattr(torch.Tensor, "clone", lambda self: self)
    assert checks.classify_credit(lambda r, p: "view", TWENTY, points=3) == 0
    assert "torch.Tensor.clone" in capfd.readouterr().out


@pytest.fixture(scope="module")
def table():
    return measured_truth(("cpu",))


@pytest.fixture
def shown(monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(checks, "_display_html", seen.append)
    return seen


def test_prediction_credit_full_at_16_partial_below_and_diagrams_of_misses(
    workdir, table, shown, capsys
):
    right = measured_predictions()
    fifteen = wrong_on((1, 2, 3, 4, 5), right, table)
    viewcopy.lock(fifteen)
    viewcopy.reveal(fifteen)
    assert checks.prediction_credit(fifteen, points=5) == round(5 * 15 / 16, 4)
    assert len(shown) == 5 and all("<svg" in s for s in shown)
    explained = [line for line in capsys.readouterr().out.splitlines() if "in strides:" in line]
    assert len(explained) == 5  # slicing and transposes: the stride algebra explains each


def test_prediction_credit_is_zero_when_changed_after_lock_or_never_locked(
    workdir, table, shown, capsys
):
    right = measured_predictions()
    assert checks.prediction_credit(right, points=5) == 0
    assert TRUTH_FIRST in capsys.readouterr().out  # never locked: the lock comes first
    grader = CheckContext.grader(local_lock(workdir), workdir)
    assert checks.prediction_credit(right, points=5, context=grader) == 0
    assert "No lock" in capsys.readouterr().out  # the grader judges and says why
    viewcopy.lock(right)
    viewcopy.reveal(right)
    assert checks.prediction_credit(right, points=5) == 5
    changed = wrong_on((7,), right, table)
    assert checks.prediction_credit(changed, points=5) == 0
    assert "Changed after the lock" in capsys.readouterr().out


def test_rules_after_counts_real_rules_for_each_miss(workdir, table, capsys):
    predictions = wrong_on((3, 8, 13), measured_predictions(), table)
    rules = {3: "a transpose only swaps strides; storage is shared", 8: "I ran it", 13: "hmm"}
    assert checks.rules_after_credit(predictions, rules, points=2) == 0
    assert TRUTH_FIRST in capsys.readouterr().out  # the kernel before the reveal
    grader = CheckContext.grader(local_lock(workdir), workdir)
    assert checks.rules_after_credit(predictions, rules, points=2, context=grader) == 0
    assert "PREDICTIONS were never locked" in capsys.readouterr().out  # no locked misses
    viewcopy.lock(predictions)
    assert checks.rules_after_credit(predictions, rules, points=2, context=grader) == 0
    out = capsys.readouterr().out  # locked, not revealed: nothing drawn
    assert "item 8" in out and "item 13" in out  # refused by name: "I ran it" is no rule
    assert "item 3 x.t(): untested, so no credit" in out  # a rule, but nothing tested it
    assert checks.rules_after_credit(predictions, ["no"], points=2, context=grader) == 0
    assert "RULES_AFTER must be a dict" in capsys.readouterr().out
    viewcopy.lock(measured_predictions())  # nothing missed, locked: no rule needed
    assert checks.rules_after_credit(measured_predictions(), {}, points=2, context=grader) == 2


@pytest.mark.parametrize(
    ("answer", "credit"),
    [
        ("", 0),
        (None, 0),
        ("It depends.", 0),
        ("it is a view, so it is fine", 0),
        ("expand sets stride 0", 1),
        ("the storage is shared", 1),
        ("reshape copied 96 bytes", 1),
        ("a 4 GB tensor from 1 B", 1),
    ],
)
def test_specificity_wants_strides_storage_or_a_byte_count(answer, credit):
    assert checks.specificity_credit(answer, item=21, points=1) == credit


def test_the_twenty_cases_are_the_catalogue_on_each_device():
    assert [c.op for c in checks.the_twenty(("cpu",))] == [op.expr for op in catalogue.OPS]
    assert set(CLASSIFIERS) >= {"data_ptr", "base", "storage_pointer", "crash"}


def test_trap_descriptions_never_state_a_verdict():
    """Feedback and the report show each hint beside the measured verdict: a hint that said
    "a copy" could contradict a PyTorch that changed. Op names like view(...) are fine."""
    verdict_words = re.compile(r"\b(?:views?|cop(?:y|ies)|shared?|shares|allocat\w*)\b(?![(=])")
    for case in TRAPS:
        assert not verdict_words.search(case.hint), case.hint
    assert verdict_words.search("a zero-element copy") and not verdict_words.search("view(3, 4)")
