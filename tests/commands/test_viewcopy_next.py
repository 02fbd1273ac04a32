"""`viewcopy next`: a draw of the next ops (or the whole pool), measured, in every format; each
verdict checked against NumPy's memory bounds confirmed by an in-place write (never viewcopy's
measurement)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from support.oracles import next_pool_oracle

from viewcopy.cli import main
from viewcopy.display.commands import NEXT_COLUMNS
from viewcopy.exercise.next_ops import POOL, draw


@pytest.fixture(scope="module")
def oracle() -> dict[str, str]:
    """Each pool op's verdict by NumPy's memory bounds, which the in-place write must confirm."""
    return next_pool_oracle()


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["next", *args])
    out, err = capsys.readouterr()
    return status, out, err


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
