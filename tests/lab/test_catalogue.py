import re
from pathlib import Path

import torch

from viewcopy.exercise import catalogue

CARD = (Path(__file__).parents[2] / "docs" / "lab_card.txt").read_text(encoding="utf-8")


def test_the_twenty_are_written_as_the_lab_card_writes_them():
    listed = dict(
        re.findall(
            r"^\s*(\d+)\. (.+?)\s*$",
            CARD.split("The twenty")[1].split("Then the dangerous five")[0],
            flags=re.M,
        )
    )
    assert [op.item for op in catalogue.OPS] == list(range(1, 21))
    assert {op.item: op.card for op in catalogue.OPS} == {int(k): v for k, v in listed.items()}


def test_each_expression_is_the_op_the_card_names():
    for op in catalogue.OPS:
        core = op.expr.split(".", 1)[1] if "." in op.expr else op.expr
        assert core.split("(")[0].split("[")[0] in op.card, op


def test_the_five_questions_are_the_card_s():
    section = CARD.split("Then the dangerous five")[1].split("Rules")[0]
    for question in catalogue.QUESTIONS:
        assert question.text in section
    assert [q.item for q in catalogue.QUESTIONS] == [21, 22, 23, 24, 25]


def test_parent_is_the_card_s_x():
    assert f"x = {catalogue.PARENT_EXPR}" in CARD


def build(name):
    return eval(catalogue.parent_expr(name), {"torch": torch})


def test_each_variant_differs_from_x_in_exactly_its_condition():
    x = build("x")
    for variant in catalogue.VARIANTS:
        v = build(variant.name)
        differs = {
            "contiguity": v.is_contiguous() != x.is_contiguous(),
            "dtype": v.dtype != x.dtype,
            "device": v.device != x.device,
        }
        assert differs == {c: c == variant.condition for c in differs}, variant.name
        assert v.shape == x.shape
        assert torch.equal(v.to(x.dtype), x)


def test_unknown_names_are_refused_with_the_choices():
    for call, arg in ((catalogue.op, 21), (catalogue.parent_expr, "y")):
        try:
            call(arg)
        except KeyError as exc:
            assert str(arg) in str(exc)
        else:
            raise AssertionError(f"{call.__name__}({arg!r}) did not refuse")
