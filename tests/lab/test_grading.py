"""The prediction policy against measurement: a plain verdict is right when it is what x gives,
`sometimes: <condition>` when that condition's variant parent flips it (NumPy's oracle decides)."""

import pytest
from support.oracles import numpy_oracle

from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.scoring import BALANCED, PASS_MARK, BaseRate, Score, judge_prediction


@pytest.fixture(scope="module")
def truth():
    return measured_truth(("cpu",))


def oracle(item, parent="x"):
    return numpy_oracle(catalogue.op(item).expr, catalogue.parent_expr(parent))


def oracle_flips(item) -> set[str]:
    """The conditions whose variant parent changes the item's verdict, by NumPy's oracle."""
    return {v.condition for v in catalogue.VARIANTS if oracle(item, v.name) != oracle(item)}


@pytest.mark.parametrize("item", catalogue.ITEMS)
def test_the_measured_verdict_on_x_is_right_and_the_other_is_wrong(truth, item):
    measured = oracle(item)
    other = {"view": "copy", "copy": "view"}[measured]
    assert judge_prediction(Prediction(measured, "r"), truth[item])[0] is True
    assert judge_prediction(Prediction(other, "r"), truth[item])[0] is False


@pytest.mark.parametrize("item", catalogue.ITEMS)
@pytest.mark.parametrize("variant", catalogue.VARIANTS, ids=lambda v: v.condition)
def test_sometimes_is_right_exactly_when_the_variant_flips_the_verdict(truth, item, variant):
    flips = variant.condition in oracle_flips(item)
    right, why = judge_prediction(Prediction(f"sometimes: {variant.condition}", "r"), truth[item])
    assert right is flips, why


def test_device_never_flips_on_a_machine_with_one_device(truth):
    for item in catalogue.ITEMS:
        right, why = judge_prediction(Prediction("sometimes: device", "r"), truth[item])
        assert not right and "no second device" in why


def test_score_passes_at_the_mark_only_when_locked():
    base = BaseRate("view", 16, 20)
    assert Score(PASS_MARK, 20, "locked", "", 0.9, base).passed
    assert not Score(PASS_MARK - 1, 20, "locked", "", 0.9, base).passed
    assert not Score(20, 20, "changed", "", 1.0, base).passed
    assert not Score(20, 20, "missing", "", 1.0, base).passed
    assert not Score(PASS_MARK, 20, "locked", "", 0.5, base, policy=BALANCED).passed


def test_the_flips_are_what_the_oracle_measures_not_the_card_s_sometimes_list(truth):
    """The card calls 7, 11, 15 and 16 the 'sometimes' items; the measured flips are the truth."""
    measured = {item: set(t.flips) for item, t in truth.items()}
    assert measured == {item: oracle_flips(item) for item in catalogue.ITEMS}
    assert {i for i, flips in measured.items() if flips} != {7, 11, 15, 16}
