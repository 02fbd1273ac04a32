"""The layout algebra against torch: every derived layout is the one torch gives on this machine,
and the explanations built from it name the strides torch reports."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcopy import OPS, PARENT_EXPR
from viewcopy.engine.explain import explain
from viewcopy.engine.layout import Layout

EXAMPLES = settings(max_examples=300, deadline=None)
TORCH_ERRORS = (RuntimeError, IndexError, ValueError)


@st.composite
def tensors(draw) -> torch.Tensor:
    """Up to 4-D tensors with sizes 1-4 (now and then a 0): arbitrary strides and offsets over an
    arange, or a contiguous tensor permuted and sliced."""
    shape = draw(st.lists(st.integers(1, 4), max_size=4))
    if shape and draw(st.integers(0, 7)) == 0:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    if draw(st.booleans()):
        stride = draw(st.lists(st.integers(0, 8), min_size=len(shape), max_size=len(shape)))
        offset = draw(st.integers(0, 3))
        need = offset + 1 + sum(max(n - 1, 0) * s for n, s in zip(shape, stride, strict=True))
        return torch.arange(need).as_strided(shape, stride, offset)
    base = torch.arange(math.prod(shape)).reshape(shape)
    base = base.permute(draw(st.permutations(range(len(shape)))))
    return base[tuple(slice(draw(st.integers(0, 1)), None, draw(st.integers(1, 2))) for _ in shape)]


@st.composite
def regroupings(draw, numel: int) -> tuple[int, ...]:
    """A shape holding `numel` elements (sometimes with one -1), or now and then any shape."""
    if draw(st.integers(0, 9)) == 0:
        return tuple(draw(st.lists(st.integers(-1, 6), max_size=4)))
    if numel == 0:
        shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    else:
        shape = [1] * draw(st.integers(0 if numel == 1 else 1, 4))
        p, rest = 2, numel
        while rest > 1:
            while rest % p == 0:
                shape[draw(st.integers(0, len(shape) - 1))] *= p
                rest //= p
            p += 1
    if shape and draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    return tuple(shape)


def agree(torch_op, derive) -> None:
    """The derived layout is Layout.of(torch's result), or both refuse the arguments."""
    try:
        result = torch_op()
    except TORCH_ERRORS:
        with pytest.raises(ValueError):
            derive()
        return
    assert derive() == Layout.of(result)


def dims(ndim: int, spare: int = 1):
    """Dimension arguments for `ndim` dimensions, a few of them out of range."""
    bound = max(ndim, 1) + spare
    return st.integers(-bound, bound - 1)


@EXAMPLES
@given(tensors())
def test_t(t):
    agree(t.t, Layout.of(t).t)


@EXAMPLES
@given(st.data(), tensors())
def test_transpose(data, t):
    a, b = data.draw(dims(t.ndim)), data.draw(dims(t.ndim))
    agree(lambda: t.transpose(a, b), lambda: Layout.of(t).transpose(a, b))


@EXAMPLES
@given(st.data(), tensors())
def test_permute(data, t):
    order = data.draw(
        st.permutations(range(t.ndim)).map(lambda p: [d - t.ndim * (d % 2) for d in p])
        | st.lists(dims(t.ndim), max_size=t.ndim + 1)
    )
    agree(lambda: t.permute(order), lambda: Layout.of(t).permute(*order))


@EXAMPLES
@given(st.data(), tensors())
def test_index(data, t):
    bound = st.none() | st.integers(-6, 6)
    item = st.integers(-5, 5) | st.builds(slice, bound, bound, st.none() | st.integers(-1, 3))
    items = tuple(data.draw(st.lists(item, max_size=t.ndim + 1)))
    agree(lambda: t[items], lambda: Layout.of(t).index(*items))


@EXAMPLES
@given(st.data(), tensors())
def test_expand(data, t):
    # Torch lets a 0 elsewhere excuse a negative size (-2, or -1 on a scalar): not modelled.
    size = st.integers(-1, 3)
    leading = data.draw(st.lists(size if t.ndim else st.integers(0, 3), max_size=2))
    kept = [data.draw(st.sampled_from([-1, n]) | size) for n in t.shape]
    sizes = (*leading, *kept)
    agree(lambda: t.expand(sizes), lambda: Layout.of(t).expand(*sizes))


@EXAMPLES
@given(st.data(), tensors())
def test_unsqueeze(data, t):
    dim = data.draw(dims(t.ndim + 1))
    agree(lambda: t.unsqueeze(dim), lambda: Layout.of(t).unsqueeze(dim))


@EXAMPLES
@given(st.data(), tensors())
def test_squeeze(data, t):
    agree(t.squeeze, Layout.of(t).squeeze)
    dim = data.draw(dims(t.ndim))
    agree(lambda: t.squeeze(dim), lambda: Layout.of(t).squeeze(dim))


@EXAMPLES
@given(st.data(), tensors())
def test_view(data, t):
    layout, shape = Layout.of(t), data.draw(regroupings(t.numel()))
    try:
        derived = layout.view(*shape)
    except ValueError:
        with pytest.raises(RuntimeError):
            t.view(shape)
        return
    reason = layout.view_failure(*shape)
    if derived is None:
        assert reason
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            t.view(shape)
    else:
        assert reason is None
        assert Layout.of(t.view(shape)) == derived


@EXAMPLES
@given(st.data(), tensors())
def test_reshape(data, t):
    layout, shape = Layout.of(t), data.draw(regroupings(t.numel()))
    try:
        derived = layout.reshape(*shape)
    except ValueError:
        with pytest.raises(RuntimeError):
            t.reshape(shape)
        return
    result = t.reshape(shape)
    shares = result.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert shares == (layout.view(*shape) is not None)
    if not shares:
        assert result.is_contiguous() and derived.is_contiguous() and derived.offset == 0
    assert Layout.of(result) == derived


def lab_x() -> torch.Tensor:
    return eval(PARENT_EXPR, {"torch": torch})


def test_view_failure_names_the_strides_that_cannot_merge():
    xt = lab_x().t()
    with pytest.raises(RuntimeError):
        xt.view(8, 3)
    layout = Layout.of(lab_x()).t()
    assert layout.view(8, 3) is None
    reason = layout.view_failure(8, 3)
    assert str(tuple(xt.stride())) in reason and "8 rows of 3" in reason
    assert str(tuple(xt.shape)) in reason


def test_view_failure_of_a_column_slice():
    part = lab_x()[:, :3]
    with pytest.raises(RuntimeError):
        part.view(12)
    reason = Layout.of(lab_x()).index(slice(None), slice(None, 3)).view_failure(12)
    assert str(tuple(part.stride())) in reason
    assert Layout.of(lab_x()).view_failure(24) is None


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.expr)
def test_explain_names_the_strides_torch_gives(op):
    x = lab_x()
    result = eval(op.expr, {"torch": torch, "x": x})
    text = explain(op.expr, Layout.of(x))
    unmodelled = any(word in op.expr for word in ("contiguous", "clone", ".to(", ".float("))
    assert (text is None) == unmodelled
    if text is not None:
        assert str(tuple(result.stride())) in text


def test_explain_says_why_reshape_copies():
    x = lab_x()
    text = explain("x.t().reshape(8, 3)", Layout.of(x))
    assert str(tuple(x.t().stride())) in text and "copies" in text
    assert str(tuple(x.t().reshape(8, 3).stride())) in text


@pytest.mark.parametrize(
    "expr",
    [
        "x.contiguous()",
        "x.clone()",
        "x.to(torch.float16)",
        "x.t().contiguous()",
        "x[",
        "__import__('os')",
        "",
        "x",
        "y.t()",
        "x.t",
        "x.view(5, 5)",
        "x.view(torch.int32)",
        "x.squeeze(dim=0)",
        "x[None]",
        "x[...]",
        "x[True]",
        "x[x > 0]",
        "x.permute(0, 0)",
        "(x + 1).t()",
        "x" + ".t()" * 1000,
        "(" * 300 + "x" + ")" * 300,
        "x.view(" + "9" * 5000 + ")",
        "\0",
    ],
)
def test_explain_declines(expr):
    assert explain(expr, Layout.of(lab_x())) is None


@EXAMPLES
@given(st.text())
def test_explain_never_raises(text):
    assert isinstance(explain(text, Layout.of(lab_x())), str | None)


STEPS = [
    "t()", "T", "transpose(0, 1)", "transpose(-1, 0)", "permute(1, 0)", "permute(2, 0, 1)",
    "[1:]", "[:, ::2]", "[0]", "[-1, 1:3]", "unsqueeze(0)", "unsqueeze(-1)", "squeeze()",
    "squeeze(0)", "view(-1)", "view(2, -1)", "reshape(-1)", "reshape(-1, 2)", "reshape((2, 3, -1))",
    "expand(2, -1, -1)", "contiguous()",
]  # fmt: skip


@EXAMPLES
@given(tensors(), st.lists(st.sampled_from(STEPS), min_size=1, max_size=3))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_explained_chains_name_torch_strides(t, steps):
    expr = "x" + "".join(s if s.startswith("[") else "." + s for s in steps)
    text = explain(expr, Layout.of(t))
    try:
        result = eval(expr, {"x": t})
    except TORCH_ERRORS:
        assert text is None or text.endswith("raises an error")
        return
    assert text is None or str(tuple(result.stride())) in text
