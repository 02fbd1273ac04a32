"""Rules tested as rules (lab card, rule 3): a rule after for a missed item earns its credit on the
hand-in's locked next ops of the item's family; "I ran it" is refused wherever a rule is asked
for; and each lock draws next ops of its own."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support.oracles import numpy_oracle

import viewcopy
from viewcopy import notebook as lab
from viewcopy.exercise import catalogue
from viewcopy.exercise.next_ops import draw
from viewcopy.exercise.next_predictions import hand_in_draw
from viewcopy.exercise.part import PredictionError, rule_problem
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.file import read_lock, save
from viewcopy.locking.record import LOCK_FILE
from viewcopy.notebook import checks

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
    """The measured sheet with `item` answered the other way."""
    sheet = measured_predictions()
    verdict = sheet[item][0]
    wrong = "copy" if verdict != "copy" else "view"
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


def test_without_a_next_op_of_its_family_a_rule_after_is_judged_by_what_it_names(revealed, capsys):
    wrong = missed_sheet(1)
    assert checks.rules_after_credit(wrong, {1: "the strides decide it"}, points=2) == 2
    assert "no next op of their family: items 1." in capsys.readouterr().out
    assert checks.rules_after_credit(wrong, {1: "it is a view because it is"}, points=2) == 0
    assert checks.rules_after_credit(wrong, {1: "I ran it and saw the strides"}, points=2) == 0
    assert '"I ran it" is not a rule' in capsys.readouterr().out


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
