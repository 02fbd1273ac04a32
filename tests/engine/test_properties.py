"""Property tests: the pure-Python stride model and the measurement, each against torch itself."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcopy.engine.layout import Layout, reached
from viewcopy.engine.measure import measure_with

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def strided(draw):
    """A tensor made by as_strided over an arange storage, so each value is its storage index."""
    shape = draw(shapes)
    stride = tuple(draw(st.integers(0, 7)) for _ in shape)
    offset = draw(st.integers(0, 5))
    extent = offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True) if n) + 1
    storage = torch.arange(extent + draw(st.integers(0, 3)), dtype=torch.float64)
    return storage.as_strided(shape, stride, offset)


@settings(max_examples=200, deadline=None)
@given(strided())
def test_layout_model_reaches_exactly_the_storage_elements_torch_reads(tensor):
    layout = Layout.of(tensor)
    values = tensor.flatten().tolist() if tensor.dim() else [tensor.item()]
    indices = list(np.ndindex(*tensor.shape)) if tensor.dim() else [()]
    if tensor.numel() == 0:
        indices, values = [], []
    assert [layout.storage_index(i) for i in indices] == [int(v) for v in values]
    assert layout.is_contiguous() == tensor.is_contiguous()
    counts = reached(layout, limit=10_000)
    assert sum(counts.values()) == tensor.numel()
    assert set(counts) == {int(v) for v in values}


VIEW_STEPS = [
    lambda t: t.t() if t.dim() == 2 else t.unsqueeze(0),
    lambda t: t[1:] if t.dim() and t.shape[0] > 1 else t.unsqueeze(-1),
    lambda t: t[..., ::2] if t.dim() else t.unsqueeze(0),
    lambda t: t.unsqueeze(0).expand(3, *t.shape),
    lambda t: t.flip(0) if t.dim() else t.reshape(1),
    lambda t: t.reshape(-1),
    lambda t: t.contiguous(),
    lambda t: t.clone(),
    lambda t: t[torch.tensor([0])] if t.dim() and t.shape[0] else t.reshape(1),
    lambda t: t.to(torch.float32),
    lambda t: t.movedim(0, -1) if t.dim() else t,
    lambda t: t.diagonal() if t.dim() == 2 else t.squeeze(),
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3),
    st.booleans(),
    st.lists(st.sampled_from(range(len(VIEW_STEPS))), min_size=1, max_size=4),
)
def test_measured_verdict_agrees_with_numpy_and_views_read_the_model_s_elements(
    sizes, transposed, steps
):
    def make_parent():
        base = torch.arange(int(np.prod(sizes)), dtype=torch.float64).reshape(sizes)
        return base.t() if transposed and base.dim() == 2 else base

    def op(x):
        for step in steps:
            x = VIEW_STEPS[step](x)
        return x

    evidence = measure_with(op, make_parent, op_expr=str(steps), parent_name="p")
    parent = make_parent()
    result = op(parent)
    shared = bool(np.shares_memory(result.numpy(), parent.numpy()))
    assert evidence.verdict == ("view" if shared else "copy")
    if evidence.verdict == "view":
        layout = Layout.of(result)
        for index in list(np.ndindex(*result.shape))[:50]:
            assert result[index].item() == layout.storage_index(index)
