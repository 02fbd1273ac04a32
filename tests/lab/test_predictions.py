import copy

import pytest

import viewcopy
from viewcopy.exercise.part import PredictionError
from viewcopy.exercise.predictions import parse_predictions
from viewcopy.locking.canonical import fingerprint as fingerprint_of
from viewcopy.locking.record import LOCK_FILE, stored


def fingerprint(parsed):
    return fingerprint_of(stored(parsed))


def good():
    return {
        i: ("view", "strides and storage offset change; storage is shared") for i in range(1, 21)
    }


def test_case_and_spaces_are_forgiven():
    predictions = good()
    predictions[3] = ("  VIEW ", "strides swap")
    predictions[7] = ("Sometimes :Contiguity", "reshape copies when strides cannot express it")
    predictions[14] = ("sometimes:   DTYPE", "to() is a no-op when dtype already matches")
    parsed = parse_predictions(predictions)
    assert parsed[3].verdict == "view"
    assert parsed[7].verdict == "sometimes: contiguity"
    assert parsed[7].condition == "contiguity"
    assert parsed[14].condition == "dtype"


BAD = [
    ({1: ("veiw", "r")}, "item 1", "did you mean 'view'"),
    ({1: ("sometimes: contiguous", "r")}, "item 1", "did you mean 'sometimes: contiguity'"),
    ({1: ("sometimes", "r")}, "item 1", "say which condition"),
    ({1: ("banana", "r")}, "item 1", "is not one of"),
    ({1: ("", "r")}, "item 1", "the verdict is empty"),
    ({1: ("view", "")}, "item 1", "the rule is empty"),
    ({1: ("view", "   It depends!  ")}, "item 1", "is not a rule"),
    ({1: ("view", "I ran it.")}, "item 1", "is not a rule"),
    ({1: "view"}, "item 1", "expected a pair"),
    ({1: ("view", "r", "extra")}, "item 1", "expected a pair"),
    ({1: (3, "r")}, "item 1", "must be a string, got int"),
    ({1: ("view", None)}, "item 1", "must be a string, got NoneType"),
    ({"1": ("view", "r")}, "key '1'", "write it as the number 1"),
    ({21: ("view", "r")}, "item 21", "remove it"),
    ({2.5: ("view", "r")}, "key 2.5", "not float; use 1 to 20"),
]


@pytest.mark.parametrize(("change", "where", "fix"), BAD)
def test_each_bad_entry_is_named_with_its_fix_and_nothing_is_written(workdir, change, where, fix):
    predictions = {**good(), **change}
    typed = copy.deepcopy(predictions)
    with pytest.raises(PredictionError) as raised:
        viewcopy.lock(predictions)
    assert isinstance(raised.value, ValueError)
    assert any(w == where and fix in f for w, f in raised.value.problems), raised.value.problems
    assert f"{where}: " in str(raised.value)
    assert predictions == typed
    assert not (workdir / LOCK_FILE).exists()
    assert list(workdir.iterdir()) == []


def test_every_problem_is_reported_at_once(workdir):
    predictions = good()
    del predictions[4], predictions[9]
    predictions[2] = ("copyy", "")
    with pytest.raises(PredictionError) as raised:
        viewcopy.lock(predictions)
    wheres = [w for w, _ in raised.value.problems]
    assert wheres == ["item 2", "item 2", "items 4, 9"]
    assert str(raised.value).startswith("3 problems in PREDICTIONS")


def test_not_a_dict_is_refused(workdir):
    with pytest.raises(PredictionError, match="must be a dict, got list"):
        viewcopy.lock([("view", "r")] * 20)


def test_fingerprint_moves_with_any_verdict_or_rule_but_not_with_spacing():
    base = parse_predictions(good())
    spaced = good()
    spaced[5] = ("  View", "  strides and storage offset change; storage is shared ")
    assert fingerprint(parse_predictions(spaced)) == fingerprint(base)
    for change in [("copy", good()[5][1]), ("view", "another rule")]:
        changed = {**good(), 5: change}
        assert fingerprint(parse_predictions(changed)) != fingerprint(base)


def test_notebooks_show_the_message_without_a_traceback(workdir):
    with pytest.raises(PredictionError) as raised:
        viewcopy.lock({**good(), 1: ("veiw", "r")})
    shown = raised.value._render_traceback_()
    assert shown[0].startswith("PredictionError: 1 problem in PREDICTIONS")
    assert any("did you mean 'view'" in line for line in shown)
    assert not any("File " in line for line in shown)
