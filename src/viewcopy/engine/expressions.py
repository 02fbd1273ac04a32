"""Evaluating the expressions students and instructors type: an op on `x`, or a parent.

Parsing and the error need no torch (the command line names ExpressionError before anything is
measured); evaluating imports it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class ExpressionError(ValueError):
    """An expression that cannot be evaluated: not Python, or naming something unknown."""


def compile_expression(source: str, *, what: str = "expression"):
    """Parse `source` as one Python expression, with a one-line message when it is not one."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(
            f"{what} {source!r} is not a valid Python expression ({exc.msg})"
        ) from None
    return compile(tree, f"<{what}>", "eval")


def namespace(**bound: object) -> dict[str, object]:
    """The names an expression may use: torch, and whatever is bound (usually `x`)."""
    import torch

    return {"__builtins__": __builtins__, "torch": torch, **bound}


def parent_factory(source: str, device: str) -> Callable[[], torch.Tensor]:
    """A function building a fresh parent from `source` each call, with `device` as the default.

    An expression that names its own device (`device='meta'`, say) keeps it.
    """
    import torch

    code = compile_expression(source, what="parent")

    def build() -> torch.Tensor:
        with torch.device(device):
            try:
                value = eval(code, namespace())
            except (NameError, AttributeError) as exc:
                raise ExpressionError(f"parent {source!r}: {exc}") from None
        if not isinstance(value, torch.Tensor):
            raise ExpressionError(f"parent {source!r} is a {type(value).__name__}, not a tensor")
        return value

    return build


def op_function(source: str) -> Callable[[torch.Tensor], object]:
    """A function applying the expression `source` to a parent bound as `x`.

    PyTorch's own refusals (RuntimeError and friends) propagate; a name or attribute the
    expression uses that does not exist becomes an ExpressionError: a typo, not a verdict.
    """
    code = compile_expression(source)

    def apply(x: torch.Tensor) -> object:
        try:
            return eval(code, namespace(x=x))
        except (NameError, AttributeError) as exc:
            raise ExpressionError(f"expression {source!r}: {exc}") from None

    return apply
