"""A cell run before the cell that defines a name it uses (after a restart, or out of order): the
bare `NameError` becomes one sentence naming the cell to run first.

Only a name the cell itself uses is explained (a NameError raised inside a library keeps its
traceback); the defining cell is found in the kernel's own notebook where the front end tells it.
"""

from __future__ import annotations

import ast

from viewcopy.locking.file import autograding
from viewcopy.locking.own_notebook import own_notebook


def install() -> bool:
    """Explain NameErrors in this IPython kernel's cells; False outside IPython, and under
    `nbgrader autograde` (the feedback shows the error as it happened)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or autograding():
        return False
    shell.set_custom_exc((NameError,), _explained)
    return True


def _explained(shell, etype, value, tb, tb_offset=None) -> None:
    """IPython's custom handler: shows the sentence for a cell's own name (still an error, so a
    graded cell earns nothing), else the usual traceback."""
    name = getattr(value, "name", None)
    if name and _raised_by_a_cell(tb):
        said = f"NameError: {not_defined_yet(name, defining_line(name))}"
        value._render_traceback_ = lambda: [said]  # IPython shows this instead of a traceback
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def _raised_by_a_cell(tb) -> bool:
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    return filename.startswith("<ipython-input") or "ipykernel_" in filename


def not_defined_yet(name: str, definer: str | None) -> str:
    """What to do when `name` is used before the cell that defines it (`definer`: its first
    line, None where the notebook could not be read) has run in this kernel."""
    where = (
        f"the cell that starts `{definer}`" if definer else f"the cell above that defines {name}"
    )
    return (
        f"{name} is not defined in this kernel yet: run {where} first, then this one. A "
        "restarted kernel forgets every variable (your notebook keeps what you typed): run the "
        "cells above this one in order (Run > Run All Above Selected Cell)."
    )


def defining_line(name: str) -> str | None:
    """The first line of the kernel's notebook's first code cell that assigns, defines or
    imports `name` at its top level; None when there is none or the notebook is unreadable."""
    content = own_notebook().content or {}
    for cell in content.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code" and name in _top_level_names(source):
            return source.strip().splitlines()[0]
    return None


def _top_level_names(source: str) -> set[str]:
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names
