"""What a graded cell hands the grader: its credit, and the data the credit was computed from.

A check returns a `Credit`: a float (nbgrader reads it as the cell's partial credit) whose display
carries, in the output's metadata, a record of the check's inputs (the student's PREDICTIONS, an
answer, what classify answered on each case). The grader recomputes the credit from that record in
its own process, with its own measured truth (viewcopy.plugins.trusted): a notebook that patches
torch, builtins, print, the display or viewcopy itself can change what it hands over, never how it
is judged. Values are encoded losslessly enough that the grader's judgment is the kernel's.
"""

from __future__ import annotations

from collections.abc import Mapping

KEY = "viewcopy"
"""The key of the record in an execute_result's metadata."""


class Credit(float):
    """A check's credit, shown as the plain float nbgrader parses, with its record attached."""

    record: dict

    def __new__(cls, value: float, record: Mapping) -> Credit:
        credit = super().__new__(cls, value)
        credit.record = dict(record)
        return credit

    def __repr__(self) -> str:
        return float.__repr__(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self)}, {KEY: self.record}


class Unscored(Credit):
    """A check that cannot judge yet, in the student's own kernel: no credit, and shown as the
    words "not scored yet" rather than a number (the grader always scores: it never sees one)."""

    def __new__(cls, record: Mapping) -> Unscored:
        return super().__new__(cls, 0.0, record)

    def __repr__(self) -> str:
        return "not scored yet"


class Opaque:
    """A value that JSON cannot hold, kept as its type and repr: checks reject it as before."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text


def encode(value: object) -> object:
    """JSON that tells int keys from str keys and tuples from lists."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    return {"opaque": type(value).__name__, "repr": repr(value)[:200]}


def decode(data: object) -> object:
    """The inverse of encode (an opaque value comes back as an Opaque)."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "dict" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["dict"]}
    return Opaque(str(data.get("opaque")), str(data.get("repr")))


def _hashable(key: object) -> object:
    return tuple(key) if isinstance(key, list) else key


def find(outputs) -> dict | None:
    """The record in a cell's outputs (from its execute_result), or None."""
    for output in outputs:
        if output.get("output_type") == "execute_result":
            record = output.get("metadata", {}).get(KEY)
            if isinstance(record, dict):
                return record
    return None
