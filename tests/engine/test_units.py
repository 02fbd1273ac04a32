"""Numbers as shown (display.units): whatever a loaded machine measures (nothing, a tick, an age,
NaN, infinity) every figure reads in its unit, tiny ones as a bound, never as a raw float."""

from __future__ import annotations

import math

import pytest
from support.shown import bare_numbers, raw_floats

from viewcopy.display import units

EXTREMES = (0, 0.0, 1e-15, 1e-9, 1.23e-4, 0.9996e-3, 0.5, 999.6, 1e15, -1e-9, math.nan, math.inf)
SHOWN = (units.seconds, units.size, units.rate, units.share)


@pytest.mark.parametrize("value", EXTREMES)
@pytest.mark.parametrize("show", SHOWN, ids=lambda show: show.__name__)
def test_every_figure_carries_its_unit_whatever_was_measured(show, value):
    text = show(value)
    assert not raw_floats(text) and not bare_numbers(text), text


@pytest.mark.parametrize(
    ("show", "value", "expected"),
    [
        (units.seconds, 0, "0 s"),
        (units.seconds, 1e-13, "<1 ns"),
        (units.seconds, 12.34e-6, "12.3 µs"),
        (units.size, 0, "0 B"),
        (units.size, 196_608, "197 KB"),
        (units.rate, 0.0493, "0.0493 GB/s"),
        (units.rate, 1e-9, "<0.01 GB/s"),
        (units.share, 1e-9, "<0.1%"),
        (units.share, 0.0, "0%"),
        (units.share, 0.75, "75%"),
        (units.seconds, math.nan, units.NONE),
        (units.rate, math.inf, units.NONE),
    ],
)
def test_tiny_values_read_as_a_bound_and_none_as_a_dash(show, value, expected):
    assert show(value) == expected


def test_a_ratio_to_nothing_is_not_measured():
    assert math.isnan(units.ratio(1.0, 0.0)) and units.share(units.ratio(1.0, 0.0)) == units.NONE
    assert units.ratio(1.0, 4.0) == 0.25
