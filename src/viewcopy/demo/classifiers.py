"""The synthetic students' classify cells: the approaches they take (`CLASSIFIERS`, with the
functions some define first), the master's model answer, and `fifteen`'s classify as `renamed`
hands it in under other names."""

from __future__ import annotations

from pathlib import Path

import nbformat

from viewcopy.course.assignment import ASSIGNMENT, grade_id
from viewcopy.course.folder import Course

MODEL_CLASSIFY = "classify"
"""The grade id of the master's classify cell: the model answer the `storage` student hands in."""

CLASSIFIERS: dict[str, str] = {
    "storage_pointer": '''
    same = op_result.untyped_storage().data_ptr() == parent.untyped_storage().data_ptr()
    return "view" if same else "copy"''',
    "data_ptr": '''
    return "view" if op_result.data_ptr() == parent.data_ptr() else "copy"''',
    "base": '''
    root = root_of(op_result)
    return "view" if same_tensor(root, parent) or same_tensor(op_result, parent) else "copy"''',
    "crash": """
    raise RuntimeError("not finished yet")""",
}


HELPERS: dict[str, str] = {
    "base": '''def root_of(tensor):
    """The tensor whose memory `tensor` lives in: its _base, else itself."""
    base = tensor._base
    return base if base is not None else tensor


def same_tensor(first, second):
    """Whether the two are one tensor object."""
    return first is second


''',
}
"""The functions a kind's classify cell defines before classify, where it has any."""


def classify_source(kind: str, repo: Path) -> str:
    """A student's classify cell using the approach `kind`; `storage` is the master's own model
    answer (from `repo`'s source notebook), as a student who solved it hands it in."""
    if kind == "storage":
        return model_classify(repo)
    return (
        HELPERS.get(kind, "")
        + 'def classify(op_result, parent):\n    """Return \'view\' or \'copy\'."""'
        + CLASSIFIERS[kind]
        + "\n"
    )


RENAMED_BASE = '''def classify(op_result, parent):
    """Return 'view' or 'copy'."""
    origin = find_origin(op_result)
    return "view" if is_same(origin, parent) or is_same(op_result, parent) else "copy"


def is_same(left, right):
    """Whether the two are one tensor object."""
    return left is right


def find_origin(t):
    """The tensor whose memory `t` lives in: its _base, else itself."""
    found = t._base
    return found if found is not None else t
'''
"""`fifteen`'s classify (the `base` kind) as the `renamed` student hands it in: every local and
helper renamed, the functions in the opposite order, nothing else changed."""


def model_classify(repo: Path) -> str:
    """The master's classify cell without its solution markers."""
    master = nbformat.read(Course(repo).master(ASSIGNMENT), as_version=4)
    (source,) = [c.source for c in master.cells if grade_id(c) == MODEL_CLASSIFY]
    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    kept = [line for line in source.splitlines() if line.strip() not in markers]
    return "\n".join(kept) + "\n"
