"""The next op: the pool, its measured verdicts, the reproducible draw and `viewcopy next`,
checked against oracles that do not go through viewcopy's measurement."""

from __future__ import annotations

import csv
import io
import json
import random
import re

import pytest
import torch
from support.oracles import in_place_oracle, numpy_oracle

from viewcopy.cli import NEXT_COLUMNS, main
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
    verdicts = {op.id: numpy_oracle(op.op, op.parent_expr) for op in POOL}
    written = {op.id: in_place_oracle(op.op, op.parent_expr) for op in POOL}
    assert verdicts == written
    return verdicts


def random_keys(count: int, seed: int) -> list[str]:
    """`count` keys shaped like a lock's fingerprint (64 hex digits)."""
    rng = random.Random(seed)
    return [f"{rng.getrandbits(256):064x}" for _ in range(count)]


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["next", *args])
    out, err = capsys.readouterr()
    return status, out, err


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


def test_next_json_is_the_draw_of_the_seed_with_oracle_verdicts(capsys, oracle):
    status, out, err = run(capsys, "--seed", "abc", "--format", "json")
    assert (status, err) == (0, "")
    records = json.loads(out)
    assert [r["id"] for r in records] == [op.id for op in draw("abc")]
    required = {"parent_expr", "verdict", "same_storage", "same_data_ptr", "bytes_allocated"}
    for record in records:
        assert list(record)[:2] == ["id", "family"] and required <= record.keys()
        assert record["verdict"] == oracle[record["id"]]


def test_next_all_lists_the_pool_with_oracle_verdicts(capsys, oracle):
    status, out, _ = run(capsys, "--all", "--format", "json")
    records = json.loads(out)
    assert status == 0 and len(records) == len(POOL)
    assert {r["id"]: r["verdict"] for r in records} == oracle


def test_next_csv_and_table_show_the_next_columns(capsys, oracle):
    _, out, _ = run(capsys, "--seed", "7", "--count", "4", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == list(NEXT_COLUMNS)
    assert [r["id"] for r in rows] == [op.id for op in draw("7", 4)]
    assert all(r["verdict"] == oracle[r["id"]] for r in rows)
    _, out, _ = run(capsys, "--seed", "7", "--count", "4")
    assert out.split("\n")[0].split() == list(NEXT_COLUMNS) and len(out.splitlines()) == 5


@pytest.mark.parametrize("count", ["0", str(len(POOL) + 1)])
def test_next_with_a_count_out_of_range_is_one_line_with_exit_status_2(capsys, count):
    status, out, err = run(capsys, "--count", count)
    assert (status, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and f"1 to {len(POOL)} ops" in err
