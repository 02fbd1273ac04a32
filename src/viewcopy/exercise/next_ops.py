"""The next op: a pool of operations the twenty never showed, measured, and a reproducible draw.

After the reveal each student meets ten of these, predicts them with their own rules, locks, and
sees the truth. Like the catalogue, the pool holds expressions only; every verdict is measured.

The pool is the shipped ops (`POOL`, N01...) and then a course's own (C01..., declared in its
nbgrader_config.py as `c.CourseDeclaration.next_ops`, `declared_ops`): the release carries them to
the student's kernel (`lab.parts(next_ops=...)`) and the grader reads them from the course's
config, each by `use_course_ops`, before anything is drawn. A course without its own draws as
before: the same key, the same ten.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from viewcopy.engine.evidence import Evidence
from viewcopy.exercise import catalogue
from viewcopy.exercise.graded_parts import DeclarationError

PARENTS: dict[str, str] = {
    "x": catalogue.PARENT_EXPR,
    **{variant.name: variant.expr for variant in catalogue.VARIANTS},
    "act": "torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)",
}
"""Parent name -> expression needing only `torch`: `x`, each variant, and a small 4-D activation."""

FAMILIES: dict[str, str] = {
    "index": "basic indexing, select, narrow, and one piece of unbind/chunk/split",
    "gather": "advanced and boolean indexing, and the ops that pick elements by index",
    "flatten": "flatten, ravel, view(-1) and reshape(-1) on packed and strided parents",
    "strides": "movedim, swapaxes, mT, diagonal, unfold, as_strided and their look-alikes",
    "broadcast": "expand_as and broadcast_to against repeat and tile",
    "dtype": "view(dtype), to, type, double, half and to(copy=True)",
    "memory_format": "memory formats on the 4-D activation: channels_last, permute then contiguous",
    "interop": "autograd and interop: detach, data, NumPy, DLPack, cpu() on the CPU",
    "join": "joining tensors: cat and stack",
    "refused": "ops PyTorch refuses: a view the strides cannot express, a shape that cannot fit",
}
"""Family id -> what its ops have in common."""

_ENTRIES: tuple[tuple[str, str, str], ...] = (
    ("index", "x", "x[1, 2]"),
    ("index", "x", "x[-1]"),
    ("index", "x", "x[1:3, 2:4]"),
    ("index", "x", "x[..., 0]"),
    ("index", "x", "x[None]"),
    ("index", "x", "x[torch.tensor(1)]"),
    ("index", "x", "x.select(1, 2)"),
    ("index", "x", "x.narrow(1, 2, 3)"),
    ("index", "x", "x.unbind(1)[0]"),
    ("index", "x", "x.chunk(2)[0]"),
    ("index", "x", "x.split(4, dim=1)[0]"),
    ("index", "x_colmajor", "x[1]"),
    ("gather", "x", "x[[1]]"),
    ("gather", "x", "x[:, [0, 2]]"),
    ("gather", "x", "x[x > 10]"),
    ("gather", "x", "x[torch.tensor([True, False, True, False])]"),
    ("gather", "x", "x.index_select(0, torch.tensor([0, 1]))"),
    ("gather", "x", "x.masked_select(x > 5)"),
    ("gather", "x", "x.take(torch.tensor([0, 5]))"),
    ("gather", "x", "x.gather(1, torch.zeros(4, 1, dtype=torch.long))"),
    ("flatten", "x", "x.flatten()"),
    ("flatten", "x", "x.ravel()"),
    ("flatten", "x", "x.view(-1)"),
    ("flatten", "x", "x.reshape(-1)"),
    ("flatten", "x", "x[:, ::2].flatten()"),
    ("flatten", "x", "x[:, :3].reshape(-1)"),
    ("flatten", "x", "x.t().flatten()"),
    ("flatten", "x_colmajor", "x.ravel()"),
    ("flatten", "x_colmajor", "x.reshape(-1)"),
    ("flatten", "act", "x.flatten(2)"),
    ("flatten", "act", "x.permute(0, 2, 3, 1).flatten()"),
    ("strides", "x", "x.movedim(0, 1)"),
    ("strides", "x", "x.swapaxes(0, 1)"),
    ("strides", "x", "x.mT"),
    ("strides", "x", "x.diagonal(1)"),
    ("strides", "x", "torch.diag(x)"),
    ("strides", "x", "x.unfold(0, 2, 1)"),
    ("strides", "x", "x.as_strided((3, 3), (7, 1))"),
    ("strides", "x", "x.flip(0)"),
    ("strides", "x", "x.t().view(2, 3, 4)"),
    ("strides", "x", "x.unflatten(1, (2, 3))"),
    ("broadcast", "x", "x.expand_as(torch.empty(3, 4, 6))"),
    ("broadcast", "x", "x.broadcast_to((2, 4, 6))"),
    ("broadcast", "x", "x[:, :1].expand(4, 6)"),
    ("broadcast", "x", "torch.broadcast_tensors(x, torch.zeros(3, 1, 1))[0]"),
    ("broadcast", "x", "x.repeat(1, 1)"),
    ("broadcast", "x", "x.tile((1,))"),
    ("broadcast", "x", "x.repeat_interleave(2, dim=0)"),
    ("dtype", "x", "x.view(torch.uint8)"),
    ("dtype", "x", "x.view(torch.float64)"),
    ("dtype", "x", "x.t().view(torch.int32)"),
    ("dtype", "x", "x.to(torch.float32)"),
    ("dtype", "x", "x.type(torch.float32)"),
    ("dtype", "x", "x.type(torch.int64)"),
    ("dtype", "x", "x.double()"),
    ("dtype", "x", "x.to(copy=True)"),
    ("dtype", "x_half", "x.half()"),
    ("dtype", "x_half", "x.to(torch.float32)"),
    ("dtype", "x_half", "x.view(torch.int16)"),
    ("dtype", "x", "x[:, 1:].view(torch.float64)"),
    ("memory_format", "act", "x.contiguous(memory_format=torch.channels_last)"),
    ("memory_format", "act", "x.permute(0, 2, 3, 1).contiguous()"),
    ("memory_format", "act", "x.permute(0, 2, 3, 1)"),
    ("memory_format", "act", "x.contiguous(memory_format=torch.contiguous_format)"),
    ("memory_format", "act", "x.to(memory_format=torch.channels_last)"),
    ("memory_format", "act", "x.reshape(2, 3, 20)"),
    ("memory_format", "act", "x.permute(0, 2, 3, 1).reshape(2, -1)"),
    ("memory_format", "act", "x.permute(0, 2, 3, 1).view(2, -1)"),
    ("interop", "x", "x.detach()"),
    ("interop", "x", "x.data"),
    ("interop", "x", "torch.from_numpy(x.numpy())"),
    ("interop", "x", "torch.tensor(x.numpy())"),
    ("interop", "x", "torch.as_tensor(x)"),
    ("interop", "x", "torch.asarray(x, copy=True)"),
    ("interop", "x", "torch.from_dlpack(x.t())"),
    ("interop", "x", "x.cpu()"),
    ("interop", "x", "x.to('cpu', copy=True)"),
    ("interop", "x", "x.detach().clone()"),
    ("join", "x", "torch.cat([x])"),
    ("join", "x", "torch.stack([x])"),
    ("join", "x", "torch.cat([x[:2], x[2:]])"),
    ("join", "x", "torch.cat([x, x.t()])"),
    ("join", "x", "torch.stack([x, x.t()])"),
    ("refused", "x", "x.t().view(24)"),
    ("refused", "x_colmajor", "x.view(24)"),
    ("refused", "x", "x[:, :3].view(12)"),
    ("refused", "x", "x.unsqueeze(0).expand(2, 4, 6).view(-1)"),
    ("refused", "x", "x.expand(8, 6)"),
    ("refused", "x", "x.as_strided((4, 6), (6, 1), 1)"),
    ("refused", "x", "x.narrow(0, 3, 2)"),
    ("refused", "x", "x.view(5, 5)"),
    ("refused", "x_half", "x.view(torch.float64)"),
)
"""(family, parent name, op) in pool order. Append new ops at the end: ids number this order."""


@dataclass(frozen=True)
class NextOp:
    """One op of the pool: `op` is evaluated on the parent `parent_expr`, bound as `x`."""

    id: str
    family: str
    parent: str
    parent_expr: str
    op: str


POOL: tuple[NextOp, ...] = tuple(
    NextOp(f"N{n:02d}", family, parent, PARENTS[parent], op)
    for n, (family, parent, op) in enumerate(_ENTRIES, start=1)
)
"""The shipped pool, N01 to the last."""
OWN_KEYS = ("op", "family", "parent")
"""What a course's own next op declares: the expression on `x`, its family, its parent (`x` if
left out)."""
_course: list[tuple[NextOp, ...]] = [()]
"""The course's own ops this process draws from too (`use_course_ops`)."""


def pool() -> tuple[NextOp, ...]:
    """The ops this process draws from: the shipped pool, then the course's own."""
    return POOL + _course[0]


def use_course_ops(ops: Sequence[NextOp]) -> None:
    """Draw from the course's own ops (`declared_ops`) besides the shipped pool, from now on in
    this process (a kernel, a grader); none: the shipped pool alone."""
    _course[0] = tuple(ops)


def declared_ops(entries: Sequence[Mapping[str, object]]) -> tuple[NextOp, ...]:
    """A course's own next ops from its declaration ({"op", "family", "parent"} each), numbered
    C01... in its order. DeclarationError names the first that is not one: an unknown key, family
    or parent, an expression that is not Python, or an op the twenty or the pool already hold.
    Whether it runs is measured (`measure_pool`, `viewcopy course check`)."""
    from viewcopy.engine.expressions import ExpressionError, compile_expression

    shipped = {(op.parent, op.op) for op in POOL}
    twenty = {("x", op.expr) for op in catalogue.OPS}
    ops: list[NextOp] = []
    for index, entry in enumerate(entries, start=1):
        where = f"next op C{index:02d}"
        if not isinstance(entry, Mapping) or not set(entry) <= set(OWN_KEYS):
            raise DeclarationError(f"{where} must be a dict of {', '.join(OWN_KEYS)}: {entry!r}")
        op, family, parent = (entry.get(key, "x" if key == "parent" else "") for key in OWN_KEYS)
        where += f" ({op!r})"
        if family not in FAMILIES:
            raise DeclarationError(
                f"{where}: family {family!r} is not one of {', '.join(FAMILIES)}"
            )
        if parent not in PARENTS:
            raise DeclarationError(f"{where}: parent {parent!r} is not one of {', '.join(PARENTS)}")
        try:
            compile_expression(str(op), what="next op")
        except ExpressionError as exc:
            raise DeclarationError(f"{where}: {exc}") from None
        key = (parent, op)
        if key in shipped or key in twenty or key in {(o.parent, o.op) for o in ops}:
            raise DeclarationError(f"{where} on {parent} is already in the twenty or the pool")
        ops.append(NextOp(f"C{index:02d}", family, parent, PARENTS[parent], op))
    return tuple(ops)


def op_by_id(op_id: str) -> NextOp:
    """The pool's op called `op_id` (N01 to the last, then the course's own)."""
    ops = pool()
    for op in ops:
        if op.id == op_id:
            return op
    raise KeyError(f"there is no next op {op_id!r}; the ids are {ops[0].id} to {ops[-1].id}")


def measure_pool(device: str = "cpu") -> dict[str, Evidence]:
    """Every op of the pool (the course's own included) measured on `device`, by id."""
    return _measured(device, pool())


@functools.cache
def _measured(device: str, ops: tuple[NextOp, ...]) -> dict[str, Evidence]:
    from viewcopy.engine.measure import measure  # the pool and its draws need no torch

    return {op.id: measure(op.op, op.parent_expr, device, parent_name=op.parent) for op in ops}


def _share(count: int, tenths: int) -> int:
    """`tenths` tenths of `count`, rounded half up."""
    return (count * tenths + 5) // 10


def quotas(count: int) -> dict[str, int]:
    """The least a draw of `count` must hold: families, and ops of each CPU verdict.

    Ten ops: 5 families, 3 views, 3 copies, 1 error. Other counts scale that in proportion,
    rounded half up (five ops: 3 families, 2 views, 2 copies, 1 error; one op: any), with never
    more than 5 families.
    """
    return {
        "families": min(5, _share(count, 5)),
        "view": _share(count, 3),
        "copy": _share(count, 3),
        "error": _share(count, 1),
    }


def _meets_quotas(ops: list[NextOp], verdicts: dict[str, str]) -> bool:
    """Whether `ops` hold the quotas of their count, with `verdicts` (id -> verdict)."""
    need = quotas(len(ops))
    found = [verdicts[op.id] for op in ops]
    enough = all(found.count(verdict) >= need[verdict] for verdict in ("view", "copy", "error"))
    return enough and len({op.family for op in ops}) >= need["families"]


def draw(key: str, count: int = 10) -> tuple[NextOp, ...]:
    """`count` ops for `key` (e.g. a lock's fingerprint), in pool order; the same key, the same.

    Samples from a generator seeded with the key's SHA-256 until the draw meets `quotas`,
    judged by the verdicts measured on the CPU.
    """
    ops = pool()
    if not 1 <= count <= len(ops):
        raise ValueError(f"a draw holds 1 to {len(ops)} ops, not {count}")
    rng = random.Random(int(hashlib.sha256(key.encode()).hexdigest(), 16))
    verdicts = {op_id: evidence.verdict for op_id, evidence in measure_pool("cpu").items()}
    while not _meets_quotas(chosen := rng.sample(ops, count), verdicts):
        pass
    return tuple(sorted(chosen, key=ops.index))


def draw_table(ops: Iterable[NextOp]) -> list[dict[str, object]]:
    """JSON-ready records of `ops` with their CPU evidence: id and family first."""
    evidence = measure_pool("cpu")
    return [
        {
            "id": op.id,
            "family": op.family,
            "parent": op.parent,
            "parent_expr": op.parent_expr,
            "op": op.op,
            **evidence[op.id].record(),
        }
        for op in ops
    ]
