"""The next op: the pool, its measured verdicts and the reproducible draw, checked against oracles
that do not go through viewcopy's measurement (`viewcopy next`: tests/commands/)."""

from __future__ import annotations

import random
import re

import pytest
import torch
from support.oracles import next_pool_oracle

from viewcopy.engine.evidence import Evidence
from viewcopy.engine.expressions import ExpressionError
from viewcopy.engine.measure import measure
from viewcopy.exercise import catalogue
from viewcopy.exercise.next_ops import (
    FAMILIES,
    PARENTS,
    POOL,
    draw,
    draw_table,
    measure_pool,
    op_by_id,
    quotas,
)


@pytest.fixture(scope="module")
def oracle() -> dict[str, str]:
    """Each pool op's verdict by NumPy's memory bounds, which the in-place write must confirm."""
    return next_pool_oracle()


def random_keys(count: int, seed: int) -> list[str]:
    """`count` keys shaped like a lock's fingerprint (64 hex digits)."""
    rng = random.Random(seed)
    return [f"{rng.getrandbits(256):064x}" for _ in range(count)]


def test_the_pool_has_60_ops_in_8_families_with_stable_ids():
    assert len(POOL) >= 60 and len(FAMILIES) >= 8
    assert [op.id for op in POOL] == [f"N{n:02d}" for n in range(1, len(POOL) + 1)]
    assert all(re.fullmatch(r"N\d{2,}", op.id) for op in POOL)
    assert {op.family for op in POOL} == set(FAMILIES)


def test_parents_are_x_the_variants_and_the_activation():
    assert PARENTS["x"] == catalogue.PARENT_EXPR
    assert all(PARENTS[v.name] == v.expr for v in catalogue.VARIANTS)
    assert eval(PARENTS["act"], {"torch": torch}).dim() == 4
    assert all(PARENTS[op.parent] == op.parent_expr for op in POOL)


def test_no_op_is_one_of_the_twenty_and_none_repeats():
    twenty = {op.expr for op in catalogue.OPS}
    assert not [op.id for op in POOL if op.op in twenty]
    assert len({(op.parent_expr, op.op) for op in POOL}) == len(POOL)


def test_every_pool_op_measures_without_expression_error():
    for op in POOL:
        try:
            measure(op.op, op.parent_expr, parent_name=op.parent)
        except ExpressionError as exc:
            pytest.fail(f"{op.id} {op.op!r} on {op.parent}: {exc}")


def test_every_measured_verdict_is_the_oracles(oracle):
    measured = measure_pool()
    assert all(isinstance(e, Evidence) and e.item is None for e in measured.values())
    assert {op_id: e.verdict for op_id, e in measured.items()} == oracle


def test_the_pool_has_plenty_of_views_copies_and_errors(oracle):
    counts = {v: list(oracle.values()).count(v) for v in ("view", "copy", "error")}
    assert counts["view"] >= 15 and counts["copy"] >= 15 and counts["error"] >= 3, counts


def test_op_by_id_finds_an_op_and_names_the_range():
    assert op_by_id("N01") is POOL[0] and op_by_id(POOL[-1].id) is POOL[-1]
    with pytest.raises(KeyError, match=rf"'N00'.*N01 to {POOL[-1].id}"):
        op_by_id("N00")


def test_a_draw_is_the_same_for_the_same_key_and_in_pool_order():
    first = draw("abc")
    assert first == draw("abc") and len(first) == 10 == len(set(first))
    assert list(first) == sorted(first, key=POOL.index)


def holds(ops, verdicts: dict[str, str], need: dict[str, int]) -> bool:
    found = [verdicts[op.id] for op in ops]
    enough = all(found.count(v) >= need[v] for v in ("view", "copy", "error"))
    return enough and len({op.family for op in ops}) >= need["families"]


def test_ten_drawn_ops_cover_5_families_3_views_3_copies_and_an_error(oracle):
    need = {"families": 5, "view": 3, "copy": 3, "error": 1}
    assert quotas(10) == need
    for key in random_keys(100, seed=1):
        assert holds(draw(key), oracle, need), key


def test_other_counts_scale_the_quotas_down_and_up(oracle):
    assert quotas(5) == {"families": 3, "view": 2, "copy": 2, "error": 1}
    assert quotas(1) == {"families": 1, "view": 0, "copy": 0, "error": 0}
    for count in range(1, len(POOL) + 1):
        ops = draw("scale", count)
        assert len(ops) == count and holds(ops, oracle, quotas(count)), count
    assert draw("any", len(POOL)) == POOL


def test_different_keys_almost_never_draw_the_same_ops():
    draws = {draw(key) for key in random_keys(200, seed=2)}
    assert len(draws) >= 195


@pytest.mark.parametrize("count", [0, -1, len(POOL) + 1])
def test_a_draw_of_no_ops_or_more_than_the_pool_is_refused(count):
    with pytest.raises(ValueError, match=f"1 to {len(POOL)} ops"):
        draw("abc", count)


def test_draw_table_puts_id_and_family_first_then_the_evidence():
    (record,) = draw_table([POOL[0]])
    assert list(record)[:5] == ["id", "family", "parent", "parent_expr", "op"]
    assert set(measure_pool()[POOL[0].id].record()) <= set(record)
    assert (record["parent"], record["op"]) == (POOL[0].parent, POOL[0].op)
