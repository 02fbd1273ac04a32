import pytest
from conftest import numpy_oracle

import viewcopy
from viewcopy import catalogue
from viewcopy.grading import PASS_MARK, Score, judge, truth_table
from viewcopy.measure import measure_catalogue
from viewcopy.predictions import Prediction


@pytest.fixture(scope="module")
def truth():
    return truth_table(measure_catalogue(("cpu",)))


def oracle(item, parent="x"):
    return numpy_oracle(catalogue.op(item).expr, catalogue.parent_expr(parent))


@pytest.mark.parametrize("item", catalogue.ITEMS)
def test_the_measured_verdict_on_x_is_right_and_the_other_is_wrong(truth, item):
    measured = oracle(item)
    other = {"view": "copy", "copy": "view"}[measured]
    assert judge(Prediction(measured, "r"), truth[item])[0] is True
    assert judge(Prediction(other, "r"), truth[item])[0] is False


@pytest.mark.parametrize("item", catalogue.ITEMS)
@pytest.mark.parametrize("variant", catalogue.VARIANTS, ids=lambda v: v.condition)
def test_sometimes_is_right_exactly_when_the_variant_flips_the_verdict(truth, item, variant):
    flips = oracle(item, variant.name) != oracle(item)
    right, why = judge(Prediction(f"sometimes: {variant.condition}", "r"), truth[item])
    assert right is flips, why


def test_device_never_flips_on_a_machine_with_one_device(truth):
    for item in catalogue.ITEMS:
        right, why = judge(Prediction("sometimes: device", "r"), truth[item])
        assert not right and "no second device" in why


def test_score_passes_at_the_mark_only_when_locked():
    assert Score(PASS_MARK, 20, "locked", "").passed
    assert not Score(PASS_MARK - 1, 20, "locked", "").passed
    assert not Score(20, 20, "changed", "").passed
    assert not Score(20, 20, "missing", "").passed


def test_the_card_s_answer_key_is_not_what_measurement_gives(truth):
    """DESIGN §4: the card says 7, 11, 15, 16 are the 'sometimes' items; 15 never flips."""
    assert truth[15].flips == ()
    assert {8, 9, 10, 12, 14} <= {i for i, t in truth.items() if t.flips}
    assert viewcopy.OPS[14].item == 15
