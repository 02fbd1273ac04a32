"""The lab's fixed content: the parent, the twenty operations, the five questions, the variants.

Each is defined once here; the notebook, the spreadsheet, the command line and the tests read it
from here. Nothing in this module says what an operation returns: that is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

PARENT_EXPR = "torch.arange(24, dtype=torch.float32).reshape(4, 6)"
"""The lab's parent `x`, exactly as the lab card defines it."""


@dataclass(frozen=True)
class Op:
    """One of the twenty: its number, the card's wording, the expression evaluated on `x`, and
    its family among the next ops' (exercise.next_ops.FAMILIES), for the report's transfer."""

    item: int
    card: str
    expr: str
    family: str


OPS: tuple[Op, ...] = (
    Op(1, "x[1:]", "x[1:]", "index"),
    Op(2, "x[:, ::2]", "x[:, ::2]", "index"),
    Op(3, "x.t()", "x.t()", "strides"),
    Op(4, "x.T", "x.T", "strides"),
    Op(5, "x.transpose(0, 1)", "x.transpose(0, 1)", "strides"),
    Op(6, "x.permute(1, 0)", "x.permute(1, 0)", "strides"),
    Op(7, "x.reshape(3, 8)", "x.reshape(3, 8)", "flatten"),
    Op(
        8,
        "x.reshape(8, 3) after x.t() (i.e. x.t().reshape(8, 3))",
        "x.t().reshape(8, 3)",
        "flatten",
    ),
    Op(9, "x.view(3, 8)", "x.view(3, 8)", "flatten"),
    Op(10, "x.view(2, 3, 4)", "x.view(2, 3, 4)", "flatten"),
    Op(11, "x.contiguous()", "x.contiguous()", "memory_format"),
    Op(12, "x.t().contiguous()", "x.t().contiguous()", "memory_format"),
    Op(13, "x.clone()", "x.clone()", "memory_format"),
    Op(14, "x.to(torch.float16)", "x.to(torch.float16)", "dtype"),
    Op(15, "x.to(device=x.device, dtype=x.dtype)", "x.to(device=x.device, dtype=x.dtype)", "dtype"),
    Op(16, "x.float() when x is already float32", "x.float()", "dtype"),
    Op(17, "x.unsqueeze(0)", "x.unsqueeze(0)", "strides"),
    Op(18, "x.squeeze()", "x.squeeze()", "strides"),
    Op(19, "x.expand(4, 6) (already that shape)", "x.expand(4, 6)", "broadcast"),
    Op(
        20,
        "x.expand(8, 4, 6) wait \u2014 x.unsqueeze(0).expand(8, 4, 6)",
        "x.unsqueeze(0).expand(8, 4, 6)",
        "broadcast",
    ),
)

ITEMS: tuple[int, ...] = tuple(op.item for op in OPS)


def op(item: int) -> Op:
    """The operation numbered `item` (1-20)."""
    if item not in ITEMS:
        raise KeyError(f"there is no item {item!r}; the items are 1 to {len(OPS)}")
    return OPS[item - 1]


@dataclass(frozen=True)
class Question:
    """One of the dangerous five, numbered 21-25 as the lab card continues the count."""

    item: int
    text: str


QUESTIONS: tuple[Question, ...] = (
    Question(21, "Why reshape is not a synonym of view."),
    Question(22, "Why x.t().reshape(...) is the copy people ship by accident."),
    Question(
        23,
        "Why expand can make a 1-byte tensor look like a 4 GB tensor without allocating 4 GB.",
    ),
    Question(
        24,
        "Why tensor.numpy() can fail after a GPU op even if .cpu() seemed fine \u2014 "
        "and what copy you just hid.",
    ),
    Question(
        25,
        "You need a channel-last activation for a conv. Do you .permute(0,2,3,1) or "
        ".contiguous() or both? What did you pay?",
    ),
)

CONDITIONS: tuple[str, ...] = ("contiguity", "dtype", "device")
"""What a `sometimes: <condition>` prediction may name."""


@dataclass(frozen=True)
class Variant:
    """A parent that differs from `x` in exactly one condition.

    `expr` builds it on the device being measured (factories run under `torch.device(...)`).
    The device variant has no expression of its own: it is `x` measured on another device.
    """

    name: str
    condition: str
    expr: str
    description: str


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "x_colmajor",
        "contiguity",
        "torch.arange(24, dtype=torch.float32).reshape(4, 6).t().contiguous().t()",
        "same shape, values and dtype as x, but column-major: strides (1, 4), not contiguous",
    ),
    Variant(
        "x_half",
        "dtype",
        "torch.arange(24, dtype=torch.float16).reshape(4, 6)",
        "same shape, values and layout as x, but float16",
    ),
)

DEVICE_VARIANT_DESCRIPTION = (
    "x itself, built on another device (cuda or mps) when one is available; "
    "an item flips under `device` when its verdict there differs from the CPU's"
)

PARENTS: tuple[str, ...] = ("x", *(v.name for v in VARIANTS))


def parent_expr(name: str) -> str:
    """The expression that builds the parent called `name` (`x` or a variant's name)."""
    if name == "x":
        return PARENT_EXPR
    for variant in VARIANTS:
        if variant.name == name:
            return variant.expr
    raise KeyError(f"unknown parent {name!r}; choose one of {', '.join(PARENTS)}")
