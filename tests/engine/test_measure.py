import subprocess
import sys
import time

import pytest
import torch
from support.oracles import numpy_oracle

from viewcopy.engine.expressions import ExpressionError, parent_factory
from viewcopy.engine.measure import MeasurementDisagreement, NotATensor, measure, measure_with
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_catalogue, measure_item

CASES = [(op.item, parent) for op in catalogue.OPS for parent in catalogue.PARENTS]


@pytest.mark.parametrize(("item", "parent"), CASES)
def test_verdict_matches_numpy_s_view_of_memory(item, parent):
    evidence = measure_item(item, parent)
    expected = numpy_oracle(catalogue.op(item).expr, catalogue.parent_expr(parent))
    assert evidence.verdict == expected
    if expected != "error":
        assert evidence.write_through == (expected == "view")


def test_item_1_shares_storage_from_another_first_element():
    evidence = measure_item(1)
    x = eval(catalogue.PARENT_EXPR, {"torch": torch})
    assert evidence.same_storage is True
    assert evidence.same_data_ptr is False
    assert evidence.storage_offset == x[1:].storage_offset() != 0


@pytest.mark.parametrize("item", [op.item for op in catalogue.OPS])
def test_copies_show_the_bytes_they_allocated(item):
    evidence = measure_item(item)
    x = eval(catalogue.PARENT_EXPR, {"torch": torch})
    result = eval(catalogue.op(item).expr, {"torch": torch, "x": x})
    if evidence.verdict == "copy":
        assert evidence.bytes_allocated == result.untyped_storage().nbytes() > 0
        assert "aten::copy_" in evidence.copy_kernels
    else:
        assert evidence.bytes_allocated == 0
        assert evidence.copy_kernels == ()


def test_same_object_counts_as_a_view():
    evidence = measure("x.contiguous()", catalogue.PARENT_EXPR)
    assert (evidence.verdict, evidence.same_object) == ("view", True)


def test_pytorch_refusal_is_the_error_verdict_with_its_message():
    x = eval(catalogue.parent_expr("x_colmajor"), {"torch": torch})
    with pytest.raises(RuntimeError) as refused:
        x.view(3, 8)
    evidence = measure_item(9, "x_colmajor")
    assert evidence.verdict == "error"
    assert evidence.message == str(refused.value).splitlines()[0]


@pytest.mark.parametrize(
    ("op_expr", "parent_expr", "verdict"),
    [
        ("x[:0]", "torch.arange(5.)", "view"),
        ("x[:0].clone()", "torch.arange(5.)", "copy"),
        ("x[1:]", "torch.empty(4, 6, device='meta')", "view"),
        ("x.clone()", "torch.empty(4, 6, device='meta')", "copy"),
    ],
)
def test_null_storage_pointers_are_judged_by_storage_identity(op_expr, parent_expr, verdict):
    evidence = measure(op_expr, parent_expr)
    assert evidence.verdict == verdict
    assert evidence.write_through is None


def test_memory_shared_through_numpy_is_a_view():
    evidence = measure("torch.from_numpy(x.numpy()[1:])", catalogue.PARENT_EXPR)
    assert (evidence.verdict, evidence.write_through) == ("view", True)


def test_huge_expanded_tensor_is_probed_without_allocating():
    start = time.perf_counter()
    evidence = measure("x.expand(2**32)", "torch.zeros(1, dtype=torch.uint8)")
    assert time.perf_counter() - start < 10
    assert evidence.verdict == "view"
    assert evidence.bytes_allocated == 0
    assert evidence.record()["logical_bytes"] == 2**32
    assert evidence.record()["storage_bytes"] == 1


def test_inference_mode_and_grad_parents_are_probed():
    assert measure("x.t()", "torch.ones(2, 3, requires_grad=True)").write_through is True
    assert measure("x.detach()", "torch.ones(2, 3, requires_grad=True)").verdict == "view"


def test_witnesses_that_disagree_fail_loudly():
    first: list[torch.Tensor] = []

    def remembers_first_parent(x):
        first.append(x)
        return first[0][1:]

    with pytest.raises(MeasurementDisagreement, match="write-through"):
        measure_with(
            remembers_first_parent,
            parent_factory(catalogue.PARENT_EXPR, "cpu"),
            op_expr="remembers first parent",
            parent_name="x",
        )


@pytest.mark.parametrize("bad", ["x.(", "y + 1", "x.not_a_method()", "torch.nope(x)"])
def test_invalid_expressions_raise_expression_error(bad):
    with pytest.raises(ExpressionError, match="expression"):
        measure(bad, catalogue.PARENT_EXPR)


def test_non_tensor_results_are_refused_with_a_hint():
    with pytest.raises(NotATensor, match=r"\(x.unbind\(0\)\)\[0\]"):
        measure("x.unbind(0)", catalogue.PARENT_EXPR)
    with pytest.raises(NotATensor, match="float"):
        measure("x.sum().item()", catalogue.PARENT_EXPR)


def test_warnings_are_recorded_not_printed():
    evidence = measure("torch.tensor(x)", catalogue.PARENT_EXPR)
    assert evidence.verdict == "copy"
    assert any("copy construct" in w for w in evidence.warnings)


def test_catalogue_covers_every_item_parent_and_device():
    rows = measure_catalogue(("cpu",))
    assert [(e.item, e.parent) for e in rows] == [
        (op.item, p) for p in catalogue.PARENTS for op in catalogue.OPS
    ]


def test_measuring_the_catalogue_writes_nothing_to_stderr():
    script = (
        "from viewcopy.engine.measure import measure\n"
        "from viewcopy.exercise.measured import measure_catalogue\n"
        "measure_catalogue(('cpu',))\n"
        "measure('torch.tensor(x)', 'torch.arange(24.).reshape(4, 6)')\n"
        "measure('x.view(5, 5)', 'torch.arange(24.).reshape(4, 6)')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
