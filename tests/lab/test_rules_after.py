"""Rules tested as rules (lab card, rule 3): a rule after for a missed item must name what decides
(exercise.rules, held to the corpus in tests/lab/test_rule_judgement.py), then earns its credit
on the hand-in's locked next ops of the item's family, and nothing while none is locked
(untested; the student's cell shows no score until then); a family no next op can test earns by
its words; the grader recomputes it the same; "I ran it" is refused wherever a rule is asked for;
and each lock draws next ops of its own."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace

import nbformat
import pytest
from support.oracles import exec_cell, numpy_oracle
from support.the_class import synthetic_student

import viewcopy
from viewcopy import notebook as lab
from viewcopy.course import check_record
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.next_ops import draw, measure_pool
from viewcopy.exercise.next_predictions import NEXT, hand_in_draw
from viewcopy.exercise.part import PredictionError, rule_problem
from viewcopy.exercise.predictions import TWENTY, parse_predictions
from viewcopy.exercise.scoring import judge_prediction
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.canonical import fingerprint
from viewcopy.locking.file import read_lock, save
from viewcopy.locking.gate import TRUTH_FIRST
from viewcopy.locking.record import LOCK_FILE
from viewcopy.notebook import checks
from viewcopy.notebook.context import CheckContext, local_lock
from viewcopy.plugins.trusted import HandedIn, MasterCell, recompute, rejudge

RAN_IT = [
    "I ran it", "ran it.", "I checked data_ptr", "I checked x.data_ptr()", "measured",
    "tested it", "I looked at the storage", "I ran it and saw the storage", "tried it myself",
    "I printed x.is_contiguous()", "verified with the profiler",
]  # fmt: skip
RULES = [
    "shares storage; only strides and offset change", "strides", "a transpose swaps strides",
    "I measured it: reshape of a transposed tensor cannot keep the strides, so it copies",
    "view because x.t() swaps strides, I checked",
]  # fmt: skip
UNLOCKED = "so there were no locked misses to write rules after for"
"""What the rules-after cell says of a twenty that does not count as locked before the reveal."""


@pytest.mark.parametrize("said", RAN_IT)
def test_a_rule_that_only_says_it_ran_something_is_refused_with_the_card_s_sentence(said):
    assert '"I ran it" is not a rule. The rule has to work on the next op' in rule_problem(said)


@pytest.mark.parametrize("rule", RULES)
def test_a_rule_that_says_why_stands(rule):
    assert rule_problem(rule) is None


def test_i_ran_it_is_refused_at_both_locks_naming_each_item_and_writing_nothing(workdir):
    sheet = measured_predictions()
    ran = {**sheet, 3: (sheet[3][0], "I ran it"), 7: (sheet[7][0], "I checked data_ptr")}
    with pytest.raises(PredictionError) as caught:
        viewcopy.lock(ran)
    assert "2 problems" in str(caught.value) and "item 3" in str(caught.value)
    assert "item 7" in str(caught.value) and not (workdir / LOCK_FILE).exists()
    viewcopy.lock(sheet)
    viewcopy.reveal(sheet)
    ids = list(lab.next_ops())
    before = (workdir / LOCK_FILE).read_text()
    with pytest.raises(PredictionError, match=rf"id {ids[0]}: 'measured': \"I ran it\""):
        viewcopy.lock_next({i: ("view", "measured") for i in ids})
    assert (workdir / LOCK_FILE).read_text() == before


def missed_sheet(item: int) -> dict:
    """The measured sheet with `item` answered the other way than what it does on x (the master
    answers some items "it depends", which is no verdict to turn round)."""
    sheet = measured_predictions()
    wrong = {"view": "copy", "copy": "view"}[
        numpy_oracle(catalogue.op(item).expr, catalogue.PARENT_EXPR)
    ]
    return {**sheet, item: (wrong, "the storage is shared, so it is a view")}


def family_item(workdir) -> tuple[int, list[str]]:
    """An item whose family the draw of a revealed sheet that misses it holds, and those ids."""
    for op in catalogue.OPS:
        sheet = missed_sheet(op.item)
        viewcopy.lock(sheet)
        viewcopy.reveal(sheet)
        ids = [n.id for n in hand_in_draw(read_lock()) if n.family == op.family]
        if ids:
            return op.item, ids
        (workdir / LOCK_FILE).unlink()
    raise AssertionError("no draw holds the family of an item it misses")


def test_a_rule_after_earns_what_it_held_on_the_next_ops_of_its_family(workdir, capsys):
    item, ids = family_item(workdir)
    ops = {op.id: op for op in hand_in_draw(read_lock())}
    truth = {i: numpy_oracle(op.op, op.parent_expr) for i, op in ops.items()}
    flipped = {"view": "copy", "copy": "view", "error": "view"}
    wrong_one = {i: (truth[i] if i != ids[0] else flipped[truth[i]], "strides") for i in ops}
    viewcopy.lock_next(wrong_one)
    sheet = missed_sheet(item)
    capsys.readouterr()
    credit = checks.rules_after_credit(sheet, {item: "strides"}, points=2)
    said = capsys.readouterr().out
    assert credit == round(2 * (len(ids) - 1) / len(ids), 4)
    assert "tested on your next ops of its family" in said
    if len(ids) > 1:
        assert f"held on {', '.join(ids[1:])}; not on {ids[0]}" in said
    else:
        assert "held on none of them" in said


def redraw(minute: int) -> None:
    """Move the time of the lock here, so that it draws other next ops for the same sheet."""
    save(replace(read_lock(), locked_at=f"2026-12-02T09:{minute:02d}:00+00:00"))


def item_not_drawn(workdir) -> int:
    """An item whose family the draw of a revealed sheet that misses it does not hold: that
    sheet locked and revealed here (its lock's time moved until it draws one)."""
    for op in catalogue.OPS:
        sheet = missed_sheet(op.item)
        viewcopy.lock(sheet)
        viewcopy.reveal(sheet)
        for minute in range(60):
            if op.family not in {n.family for n in hand_in_draw(read_lock())}:
                return op.item
            redraw(minute)
        (workdir / LOCK_FILE).unlink()
    raise AssertionError("every draw holds the family of the item its sheet misses")


def right_next() -> dict:
    """This hand-in's next ops, each predicted as measured."""
    measured = measure_pool()
    return {op.id: (measured[op.id].verdict, "strides") for op in hand_in_draw(read_lock())}


def test_without_a_next_op_of_its_family_a_rule_after_is_judged_by_what_it_names(workdir, capsys):
    item = item_not_drawn(workdir)
    wrong = missed_sheet(item)
    viewcopy.lock_next(right_next())
    assert checks.rules_after_credit(wrong, {item: "the strides decide it"}, points=2) == 2
    assert f"no next op of their family: items {item}." in capsys.readouterr().out
    assert checks.rules_after_credit(wrong, {item: "it is a view because it is"}, points=2) == 0
    assert "gives a verdict, not what decides it" in capsys.readouterr().out
    assert checks.rules_after_credit(wrong, {item: "I ran it and saw the strides"}, points=2) == 0
    assert '"I ran it" is not a rule' in capsys.readouterr().out


@pytest.mark.parametrize("said", ["I ran it and it was the same object", "I checked data_ptr"])
def test_a_report_of_running_earns_nothing_even_where_next_ops_of_its_family_held(
    workdir, capsys, said
):
    """The rule after that only reports running used to earn what the next ops held (2/2 with
    them locked right): a rule must name what decides, next ops or not."""
    item, _ = family_item(workdir)
    viewcopy.lock_next(right_next())
    assert checks.rules_after_credit(missed_sheet(item), {item: said}, points=2) == 0
    assert '"I ran it" is not a rule' in capsys.readouterr().out


def test_before_the_next_ops_are_locked_the_cell_shows_no_score_and_says_what_comes(
    revealed, capsys
):
    right = measured_predictions()  # nothing missed: nothing to test, so it scores at once
    assert repr(checks.rules_after_credit(right, {}, points=2)) == "2.0"
    (revealed / LOCK_FILE).unlink()
    item = item_not_drawn(revealed)  # a rule its words alone would credit, and still no score
    capsys.readouterr()
    credit = checks.rules_after_credit(missed_sheet(item), {item: "strides"}, points=2)
    said = capsys.readouterr().out
    assert repr(credit) == "not scored yet" and credit == 0
    assert "scored once your next ops test them" in said
    assert "viewcopy.lock_next(NEXT_PREDICTIONS), then run this cell again" in said
    assert "/2" not in said and "untested" not in said
    viewcopy.lock_next(right_next())
    assert repr(checks.rules_after_credit(missed_sheet(item), {item: "strides"}, points=2)) == "2.0"


def test_a_rule_after_whose_family_is_drawn_earns_nothing_until_those_next_ops_are_locked(
    workdir, capsys
):
    item, ids = family_item(workdir)
    sheet, rules = missed_sheet(item), {item: "the strides decide it"}
    grader = CheckContext.grader(local_lock(workdir), workdir)
    capsys.readouterr()
    assert checks.rules_after_credit(sheet, rules, points=2, context=grader) == 0
    said = capsys.readouterr().out
    assert f"item {item} {catalogue.op(item).expr}: untested, so no credit" in said
    assert f"({catalogue.op(item).family}), {', '.join(ids)}, and no locked" in said
    assert f"items {item}. Predict your next ops of their families ({', '.join(ids)})" in said
    assert "viewcopy.lock_next(NEXT_PREDICTIONS), then run this cell again." in said
    assert "judged by what" not in said
    viewcopy.lock_next(right_next())
    assert checks.rules_after_credit(sheet, rules, points=2) == 2
    assert "untested" not in capsys.readouterr().out


@pytest.mark.parametrize("spoiled", ["changed after its lock", "without the family's ids"])
def test_a_next_lock_that_locks_none_of_the_family_leaves_its_rule_untested(
    workdir, capsys, spoiled
):
    item, ids = family_item(workdir)
    viewcopy.lock_next(right_next())
    record = read_lock()
    held = record.part(NEXT.key)
    if spoiled == "changed after its lock":
        spoilt = replace(held, answers={**held.answers, ids[0]: ["error", "strides"]})
    else:
        kept = {i: answer for i, answer in held.answers.items() if i not in ids}
        spoilt = replace(held, answers=kept, fingerprint=fingerprint(kept))
    save(record.with_part(NEXT.key, spoilt))
    capsys.readouterr()
    assert checks.rules_after_credit(missed_sheet(item), {item: "strides"}, points=2) == 0
    assert "untested, so no credit" in capsys.readouterr().out


def test_without_a_draw_a_rule_after_is_untested_and_the_cell_says_how_to_test_it(workdir, capsys):
    sheet = missed_sheet(1)
    grader = CheckContext.grader(local_lock(workdir), workdir)
    for lock_it in (False, True):  # no lock at all, then locked but not revealed: nothing drawn
        if lock_it:
            viewcopy.lock(sheet)
        for rule in ("the strides decide it", "the storage is shared"):
            capsys.readouterr()
            assert checks.rules_after_credit(sheet, {1: rule}, points=2) == 0
            assert TRUTH_FIRST in capsys.readouterr().out  # the kernel: the reveal comes first
            assert checks.rules_after_credit(sheet, {1: rule}, points=2, context=grader) == 0
            said = capsys.readouterr().out
            if not lock_it:  # no locked misses: no rule to test
                assert f"PREDICTIONS were never locked before the reveal, {UNLOCKED}" in said
                continue
            assert "no next ops are drawn to test it until the twenty are locked and" in said
            assert "Untested, so they earn nothing yet: items 1." in said
            assert "lock and reveal the twenty above first" in said
            assert "judged by what it names" not in said


RULES_CELL = "viewcopy.checks.rules_after_credit(PREDICTIONS, RULES_AFTER, points=2)"


def kernel_cell(credit) -> nbformat.NotebookNode:
    """The rules-after cell as the kernel left it: the credit it displayed, with its record."""
    shown, meta = credit._repr_mimebundle_()
    output = {"output_type": "execute_result", "execution_count": 1, "data": shown}
    return nbformat.v4.new_code_cell(outputs=[nbformat.from_dict({**output, "metadata": meta})])


def test_the_grader_recomputes_a_rule_after_as_the_kernel_judged_it(workdir, capsys):
    item, _ = family_item(workdir)
    sheet, rules = missed_sheet(item), {item: "the strides decide it"}
    master = MasterCell.of(RULES_CELL, 2)
    grading = CheckContext.grader(local_lock(workdir), workdir)
    for locked_next in (False, True):  # untested, then tested on the next ops locked right
        if locked_next:
            viewcopy.lock_next(right_next())
        capsys.readouterr()
        with pytest.MonkeyPatch.context() as autograde:  # the kernel that autograde reruns
            autograde.setenv("NBGRADER_EXECUTION", "autograde")
            kernel = checks.rules_after_credit(sheet, rules, points=2)
        said = capsys.readouterr().out
        record = kernel._repr_mimebundle_()[1][check_record.KEY]
        handed_in = HandedIn({TWENTY.key: sheet}, grading)
        grader = recompute(master, record, handed_in)
        assert grader == (kernel, said)
        graded = kernel_cell(kernel)
        rejudge(graded, master, handed_in)
        assert len(graded.outputs) == 1 and graded.outputs[0].data["text/plain"] == repr(kernel)
        assert kernel == (2 if locked_next else 0)
    faked = kernel_cell(kernel)
    save(replace(read_lock(), next=None))
    rejudge(faked, master, HandedIn({TWENTY.key: sheet}, grading))
    assert faked.outputs[-1].data["text/plain"] == "0.0"  # its next ops' lock gone: untested
    assert "untested, so no credit" in faked.outputs[0].text


def test_two_locks_of_the_same_sheet_draw_their_own_next_ops_and_old_locks_keep_theirs(revealed):
    record = read_lock()
    later = replace(record, locked_at="2026-12-02T09:00:00+00:00")
    assert [op.id for op in hand_in_draw(record)] != [op.id for op in hand_in_draw(later)]
    assert hand_in_draw(record) == hand_in_draw(read_lock())  # a re-run draws the same ten
    before_versions = replace(record, draw_version=0)
    assert hand_in_draw(before_versions) == draw(record.fingerprint)
    save(before_versions)
    assert read_lock().draw_version == 0 and lab.next_ops() == {
        op.id: (op.parent_expr, op.op) for op in draw(record.fingerprint)
    }


def judged_twice(workdir, sheet: dict, rules: dict) -> tuple[float, str]:
    """The rules-after cell in the student's kernel (its credit and what it printed), asserted
    the same as the grader's recomputation of its record for the hand-in in `workdir`."""
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        kernel = checks.rules_after_credit(sheet, rules, points=2)
    record = kernel._repr_mimebundle_()[1][check_record.KEY]
    handed_in = HandedIn({TWENTY.key: sheet}, CheckContext.grader(local_lock(workdir), workdir))
    assert recompute(MasterCell.of(RULES_CELL, 2), record, handed_in) == (kernel, said.getvalue())
    return kernel, said.getvalue()


def test_the_demo_s_never_locked_student_earns_no_rules_after_in_the_kernel_or_the_grader(
    workdir, monkeypatch
):
    """`never_locked` (viewcopy.demo.synthetic) is all right and never ran its notebook: no miss
    needs a rule, and its rules after used to earn 2/2 in the grader. A twenty never locked
    before the reveal has no locked misses: nothing for rules after, said in one sentence."""
    student = synthetic_student("never_locked")
    sheet = exec_cell(student.cells["predictions"], "PREDICTIONS")
    rules = exec_cell(student.cells["rules_after"], "RULES_AFTER")
    table = measured_truth()
    assert all(judge_prediction(p, table[i])[0] for i, p in parse_predictions(sheet).items())
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # the kernel autograde runs it in
    credit, said = judged_twice(workdir, sheet, rules)
    assert (credit, repr(credit)) == (0, "0.0")
    assert (
        f"0/2 for rules after: your PREDICTIONS were never locked before the reveal, {UNLOCKED}"
        in said
    )
    assert f"{UNLOCKED} (next time, lock them before you look" in said
    assert said.count("\n") == 1 and "missed items have a rule" not in said  # one sentence
    assert not (workdir / LOCK_FILE).exists()


@pytest.mark.parametrize("kernel", ["the student's", "autograde's"])
def test_a_twenty_changed_after_its_lock_earns_no_rules_after_where_locked_it_earned_them(
    workdir, monkeypatch, kernel
):
    """The same miss and the same rule, tested on next ops locked right: 2/2 while the twenty
    stand as locked, nothing once they changed after the lock, in the kernel and the grader."""
    item, _ = family_item(workdir)
    sheet, rules = missed_sheet(item), {item: "the strides decide it"}
    viewcopy.lock_next(right_next())
    if kernel == "autograde's":
        monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    credit, said = judged_twice(workdir, sheet, rules)
    assert credit == 2 and UNLOCKED not in said and "1/1 missed items have a rule" in said
    other = next(i for i in catalogue.ITEMS if i != item)
    changed = {**sheet, other: (sheet[other][0], "another rule, written after the reveal")}
    credit, said = judged_twice(workdir, changed, rules)
    assert (credit, repr(credit)) == (0, "0.0")
    assert f"0/2 for rules after: your PREDICTIONS changed after their lock, {UNLOCKED}" in said
    assert said.count("\n") == 1 and "missed items have a rule" not in said
