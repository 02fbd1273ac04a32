"""The grader's own verdict on a check cell: recomputed from the cell's record, never taken from
what the cell displayed."""

from __future__ import annotations

import ast

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from viewcopy.course import check_record
from viewcopy.exercise.predictions import TWENTY
from viewcopy.instructor.master import measured_predictions
from viewcopy.notebook import checks, lock, reveal
from viewcopy.notebook.context import CheckContext, local_lock
from viewcopy.notebook.miss_lines import parse_misses
from viewcopy.plugins.trusted import HandedIn, MasterCell, check_call, master_cases, rejudge

PREDICTION_CELL = "viewcopy.checks.prediction_credit(PREDICTIONS, points=5)"
SPECIFIC_CELL = "viewcopy.checks.specificity_credit(ANSWER_21, item=21, points=1)"
TRAPS_CELL = (
    "TRAPS = viewcopy.checks.on_devices([('offset', 'torch.arange(6.)', 'x[2:]'),"
    " ('copy', 'torch.arange(6.)', 'x.clone()')], ('cpu',))\n"
    "viewcopy.checks.classify_credit(classify, TRAPS, points=2)"
)


def cell(credit, *, claimed: str | None = None, record: dict | None = None):
    """A check cell as the kernel left it: the execute_result it displayed."""
    shown, meta = credit._repr_mimebundle_() if credit is not None else ({}, {})
    output = {
        "output_type": "execute_result",
        "execution_count": 1,
        "data": {"text/plain": claimed if claimed is not None else shown.get("text/plain", "")},
        "metadata": meta if record is None else {check_record.KEY: record},
    }
    return nbformat.v4.new_code_cell(source="", outputs=[nbformat.from_dict(output)])


def handed_in(folder, sheets=None) -> HandedIn:
    """The grader's view of the hand-in in `folder`: its lock file decides, `sheets` by part."""
    return HandedIn(sheets or {}, CheckContext.grader(local_lock(folder), folder))


def credit_of(c) -> float:
    (result,) = [o for o in c.outputs if o.output_type == "execute_result"]
    return float(result.data["text/plain"])


@pytest.fixture
def locked_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.chdir(tmp_path)  # the kernel's own checks read the lock beside the notebook
    predictions = measured_predictions()
    lock(predictions, directory=tmp_path)
    reveal(predictions, directory=tmp_path)  # the kernel's checks judge after the reveal
    return tmp_path, predictions


def test_a_faked_score_is_replaced_by_the_recomputed_one(locked_folder, capsys):
    folder, predictions = locked_folder
    honest = checks.prediction_credit(predictions, points=5)
    wrong = {**predictions, 1: ("copy", "a slice copies its rows")}
    faked = cell(checks.prediction_credit(wrong, points=5), claimed="5.0")  # lock mismatch: 0
    master = MasterCell.of(PREDICTION_CELL, 5)
    rejudge(faked, master, handed_in(folder, {TWENTY.key: wrong}))
    assert credit_of(faked) == 0 < honest == 5
    assert "not what this notebook reported" in faked.outputs[0].text
    unchanged = cell(checks.prediction_credit(predictions, points=5))
    rejudge(unchanged, master, handed_in(folder, {TWENTY.key: predictions}))
    assert credit_of(unchanged) == 5 and len(unchanged.outputs) == 1


def test_no_record_is_no_credit_even_with_no_output_at_all(tmp_path):
    silent = nbformat.v4.new_code_cell(source="", outputs=[])  # nbgrader alone: full marks
    rejudge(silent, MasterCell.of(SPECIFIC_CELL, 1), handed_in(tmp_path))
    assert credit_of(silent) == 0
    assert "no record" in silent.outputs[0].text


def test_a_record_for_another_check_is_no_credit(tmp_path):
    specific = checks.specificity_credit("the storage is shared", item=21, points=1)
    swapped = cell(specific)
    rejudge(swapped, MasterCell.of(TRAPS_CELL, 2), handed_in(tmp_path))
    assert credit_of(swapped) == 0


def test_an_erroring_cell_is_left_to_nbgrader(tmp_path):
    error = nbformat.from_dict(
        {"output_type": "error", "ename": "NameError", "evalue": "x", "traceback": []}
    )
    broken = nbformat.v4.new_code_cell(source="", outputs=[error])
    rejudge(broken, MasterCell.of(SPECIFIC_CELL, 1), handed_in(tmp_path))
    assert broken.outputs == [error]


def test_classify_answers_are_judged_against_the_graders_measurement(revealed, tmp_path):
    cases = master_cases(TRAPS_CELL, check_call(TRAPS_CELL))
    always_view = checks.classify_credit(lambda r, p: "view", cases, points=2)
    assert always_view == 1  # x[2:] is a view, x.clone() a copy
    forged = [dict(row, got="view") for row in always_view.record["answers"]]
    forged[1]["got"] = "copy"
    c = cell(always_view, claimed="1.0", record={"check": "classify_credit", "answers": forged})
    rejudge(c, MasterCell.of(TRAPS_CELL, 2), handed_in(tmp_path))
    assert credit_of(c) == 2  # answering right is what full marks take, however it is done
    assert parse_misses(c.outputs[0].text) == []  # the grader's reasons, for the report
    dropped = cell(always_view, record={"check": "classify_credit", "answers": forged[:1]})
    rejudge(dropped, MasterCell.of(TRAPS_CELL, 2), handed_in(tmp_path))
    assert credit_of(dropped) == 1  # a case with no recorded answer is a miss, not skipped


def test_check_call_finds_only_a_final_viewcopy_check():
    assert check_call(PREDICTION_CELL).func.attr == "prediction_credit"
    assert check_call("x = 1") is None
    assert check_call(f"{PREDICTION_CELL}\nprint(1)") is None
    assert check_call("viewcopy.checks.the_twenty()") is None
    assert check_call("def (") is None


def test_master_cases_are_the_masters_own(tmp_path):
    call = check_call(TRAPS_CELL)
    assert [c.op for c in master_cases(TRAPS_CELL, call)] == ["x[2:]", "x.clone()"]
    visible = "viewcopy.checks.classify_credit(classify, viewcopy.checks.the_twenty(), points=3)"
    assert len(master_cases(visible, check_call(visible))) >= 20
    assert isinstance(ast.parse(TRAPS_CELL), ast.Module)


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.integers() | st.text(), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(values)
def test_records_keep_int_keys_tuples_and_strings_apart(value):
    assert check_record.decode(check_record.encode(value)) == value


def test_credit_displays_as_the_float_nbgrader_parses_and_carries_its_record():
    credit = check_record.Credit(2.5, {"check": "specificity_credit"})
    data, metadata = credit._repr_mimebundle_()
    assert data == {"text/plain": "2.5"} and credit == 2.5
    assert check_record.find([{"output_type": "execute_result", "metadata": metadata}]) == {
        "check": "specificity_credit"
    }
