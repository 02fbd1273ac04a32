import re

import pandas as pd
import pytest
from support.contrast import contrast
from support.oracles import numpy_oracle

import viewcopy
from viewcopy.display.table import RIGHT, WRONG
from viewcopy.exercise import catalogue


def measured_predictions(wrong_items=()):
    """Predictions set from the NumPy oracle, deliberately wrong on `wrong_items`."""
    out = {}
    for op in catalogue.OPS:
        verdict = numpy_oracle(op.expr, catalogue.PARENT_EXPR)
        if op.item in wrong_items:
            verdict = {"view": "copy", "copy": "view"}[verdict]
        out[op.item] = (verdict, "storage shared when strides can express the result")
    return out


@pytest.fixture
def revealed(workdir):
    predictions = measured_predictions(wrong_items=(3, 8, 13, 20, 1))
    viewcopy.lock(predictions)
    return viewcopy.reveal(predictions)


def test_reveal_fills_actual_per_device_and_the_score(revealed):
    frame = revealed.frame
    assert len(frame) == 20
    assert list(frame.index) == list(range(1, 21))
    assert "actual (cpu)" in frame.columns
    for op in catalogue.OPS:
        assert frame.loc[op.item, "actual (cpu)"] == numpy_oracle(op.expr, catalogue.PARENT_EXPR)
    assert list(frame.index[frame["correct"] == "no"]) == [1, 3, 8, 13, 20]
    assert (revealed.score.correct, revealed.score.passed) == (15, False)
    assert "15/20 predicted correctly (balanced score" in revealed.headline()
    assert "does not pass the 16/20 line" in revealed.headline()


def test_evidence_column_names_bytes_for_copies(revealed):
    evidence = revealed.frame.loc[13, "evidence (x, cpu)"]
    assert evidence.startswith("new storage, 96 B allocated") and "aten::copy_" in evidence
    assert revealed.frame.loc[1, "evidence (x, cpu)"].startswith("same storage, offset 6")


def test_rows_are_tinted_right_and_wrong_with_inline_styles(revealed):
    html = revealed._repr_html_()
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    colour_of_row = {}
    for item, row in re.findall(r"<tr><th[^>]*>(\d+)</th>(.*?)</tr>", body):
        colour_of_row[int(item)] = set(re.findall(r"background-color: (#\w+)", row))
    wrong = {item for item, colours in colour_of_row.items() if colours == {WRONG}}
    right = {item for item, colours in colour_of_row.items() if colours == {RIGHT}}
    assert wrong == {1, 3, 8, 13, 20}
    assert right == set(range(1, 21)) - wrong
    assert "<style" not in html  # tints are inline: they survive the sanitizer
    assert html.startswith("<p><b>15/20")


def test_a_tint_sets_its_text_colour_and_the_row_says_it_in_words(revealed):
    html = revealed._repr_html_()
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    said = revealed.frame["correct"]
    for item, row in re.findall(r"<tr><th[^>]*>(\d+)</th>(.*?)</tr>", body):
        pairs = set(re.findall(r"background-color: (#\w+); color: (#\w+)", row))
        ((tint, ink),) = pairs
        assert contrast(ink, tint) >= 4.5, (item, ink, tint)
        assert said[int(item)] == {RIGHT: "yes", WRONG: "no"}[tint]
        assert f">{said[int(item)]}</td>" in row


def test_the_table_scrolls_in_a_named_region_the_keyboard_reaches(revealed):
    html = revealed._repr_html_()
    region = re.search(r'<div role="region" tabindex="0" aria-label="([^"]+)"[^>]*>', html)
    assert region and "overflow-x:auto" in region.group(0)
    assert html.index(region.group(0)) < html.index("<table")


def test_csv_round_trip_keeps_every_row(revealed, workdir):
    revealed.to_csv(workdir / "sheet.csv")
    back = pd.read_csv(workdir / "sheet.csv", index_col="item")
    assert back.loc[8, "correct"] == "no"
    assert back.shape == revealed.frame.shape
    assert revealed.frame.attrs["score"].correct == 15


def test_predictions_changed_after_lock_do_not_count(workdir, monkeypatch):
    predictions = measured_predictions()
    viewcopy.lock(predictions)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    changed = {**predictions, 5: ("copy", "transpose must move elements in memory")}
    sheet = viewcopy.lock(changed)
    assert sheet.lock.state == "changed"
    with pytest.raises(viewcopy.LockError):
        viewcopy.reveal(changed)
    assert viewcopy.reveal(predictions).score.passed


def test_each_missed_item_is_explained_in_torch_s_own_strides(revealed):
    import torch

    frame = revealed.frame
    x = eval(catalogue.PARENT_EXPR, {"torch": torch})
    for item in (1, 3, 8, 20):  # slicing, transpose, transpose-then-reshape, expand
        result = eval(catalogue.op(item).expr, {"torch": torch, "x": x})
        assert str(tuple(result.stride())) in frame.loc[item, "in strides"], item
    clone = x.clone().untyped_storage().nbytes()  # clone: no stride algebra, but measured
    assert f"copies into a new {clone} B storage" in frame.loc[13, "in strides"]
    assert (frame.loc[frame["correct"] == "yes", "in strides"] == "").all()
