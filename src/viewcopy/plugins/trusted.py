"""The grader's own verdict on every check cell, recomputed outside the student's kernel.

An autograde preprocessor, run after the notebook executes and before nbgrader saves the grades. For
each graded test cell it reads the master's source from the gradebook (never the notebook's), finds
the `viewcopy.checks` call it ends with, takes that call's inputs from the record the cell handed
over (viewcopy.course.check_record), and computes the credit with the same function, in the grader's
process, against truth the grader measures. That credit replaces whatever the cell displayed:
printed or displayed fake scores, a silenced display, a patched torch or a replaced helper in the
kernel change nothing. A check cell with no record gets no credit, and says why.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from nbformat.notebooknode import NotebookNode, from_dict
from nbgrader.api import Gradebook
from nbgrader.utils import is_grade, is_solution

from viewcopy.course import check_record
from viewcopy.course.assignment import PREDICTED_PARTS
from viewcopy.course.handin import written_sheet
from viewcopy.course.settings import course_settings
from viewcopy.exercise.next_ops import use_course_ops
from viewcopy.locking.file import read_lock
from viewcopy.locking.flow import LockStatus
from viewcopy.locking.judge import judge
from viewcopy.plugins.base import CoursePreprocessor

if TYPE_CHECKING:
    from viewcopy.notebook.context import CheckContext

MAX_RECORD_BYTES = 1_000_000
CHECKS_PATH = "viewcopy.checks"
"""The path the master's test cells call every check by (a stable path: gradebooks keep it)."""


@dataclass(frozen=True)
class MasterCell:
    """A test cell as the master wrote it (its source from the gradebook, never the hand-in's):
    the `viewcopy.checks.<check>(...)` call it ends with, and its points."""

    source: str
    call: ast.Call
    points: float

    @classmethod
    def of(cls, source: str, points: float) -> MasterCell | None:
        """The master cell, if it ends with a check call (else the grader leaves it to nbgrader)."""
        call = check_call(source)
        return None if call is None else cls(source, call, float(points))

    @property
    def check(self) -> str:
        """The name of the check it calls."""
        return ast.unparse(self.call.func).rsplit(".", 1)[1]


@dataclass(frozen=True)
class HandedIn:
    """What the grader judges a hand-in's check cells with: the sheets its answer cells write
    out, by part (`Part.key`), and the checks' context (its lock file and the course's judgment
    of its locks)."""

    sheets: Mapping[str, object]
    context: CheckContext


class TrustedCredit(CoursePreprocessor):
    """Replace each check cell's credit by the grader's own computation of it."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        from viewcopy.notebook.context import CheckContext

        info = resources["nbgrader"]
        folder = Path(resources["metadata"]["path"])
        settings = course_settings(self.config)
        policy = settings.lock
        use_course_ops(settings.next_ops)  # the course's next-op pool, drawn from as the release

        def lock(part, parsed) -> LockStatus:
            record = read_lock(folder)
            return judge(policy, part, parsed, record, info["student"], info["assignment"])

        # every part's sheet as its answer cell writes it, never as computed
        handed_in = HandedIn(
            {part.key: written_sheet(nb, part) for part in PREDICTED_PARTS},
            CheckContext.grader(lock, folder),
        )
        with Gradebook(info["db_url"], settings.course_id) as gradebook:
            for cell in nb.cells:
                if cell.cell_type != "code" or not is_grade(cell) or is_solution(cell):
                    continue
                source = gradebook.find_source_cell(
                    cell.metadata.nbgrader["grade_id"], info["notebook"], info["assignment"]
                ).source
                master = MasterCell.of(source, cell.metadata.nbgrader["points"])
                if master is not None:
                    rejudge(cell, master, handed_in)
        return nb, resources


def check_call(source: str) -> ast.Call | None:
    """The `viewcopy.checks.<check>(...)` call a test cell ends with, if it ends with one."""
    from viewcopy.notebook.checks import CHECKS

    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        return None
    name = ast.unparse(last.value.func)
    return last.value if name in {f"{CHECKS_PATH}.{c}" for c in CHECKS} else None


def rejudge(cell: NotebookNode, master: MasterCell, handed_in: HandedIn) -> None:
    """Put the grader's credit (and, when it differs, a note) in place of the cell's own."""
    record = check_record.find(cell.outputs)
    claimed = _claimed(cell.outputs)
    points = master.points
    if any(o.output_type == "error" for o in cell.outputs):
        return  # nbgrader gives an erroring cell no credit; nothing to recompute
    credit, note = 0.0, ""
    if record is None or record.get("check") != master.check:
        note = (
            "The grader found no record of this check's inputs in the cell's output (the "
            "notebook changed how checks run or display), so it gives no credit."
        )
    elif len(json.dumps(record)) > MAX_RECORD_BYTES:
        note = "This check's record is too large to be one this lab wrote: no credit."
    else:
        try:
            credit, reasons = recompute(master, record, handed_in)
        except Exception as exc:  # a record the check refuses earns nothing, and says why
            note = f"The grader could not judge this cell's record ({type(exc).__name__}: {exc})."
        if not note and claimed != credit:
            note = (
                f"The grader's own measurement gives {credit:g}/{points:g}, not what this "
                f"notebook reported ({claimed}); the grader's number counts. Its reasons:\n"
                f"{reasons}"
            )
    cell.outputs = [o for o in cell.outputs if o.output_type != "execute_result"]
    if note:
        cell.outputs.append(from_dict({"output_type": "stream", "name": "stdout", "text": note}))
    cell.outputs.append(
        from_dict(
            {
                "output_type": "execute_result",
                "execution_count": cell.get("execution_count"),
                "data": {"text/plain": repr(float(credit))},
                "metadata": {},
            }
        )
    )


def _claimed(outputs) -> str | None:
    for output in outputs:
        if output.get("output_type") == "execute_result":
            text = output.get("data", {}).get("text/plain")
            try:
                return float(text)
            except (TypeError, ValueError):
                return text
    return None


def recompute(master: MasterCell, record: dict, handed_in: HandedIn) -> tuple[float, str]:
    """The check's own function, on the recorded inputs, in this process: its credit, and what it
    printed (the reasons, as the grader sees them). A part's sheet is the hand-in's
    (`handed_in.sheets`: what its answer cell writes out), whatever the kernel recorded; the
    other inputs are the record's (notebook.checks.CHECKS declares which are which)."""
    from viewcopy.notebook.checks import CHECKS

    check = CHECKS[master.check]
    if missing := [name for name in check.inputs if name not in record]:
        raise ValueError(f"the record of {check.name} has no {', '.join(missing)}")
    call = master.call
    options = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg != "points"}
    options.update(points=master.points, context=handed_in.context)
    if check.replay is not None:
        arguments = [check.replay(record), master_cases(master.source, call)]
    else:
        arguments = [handed_in.sheets[part.key] for part in check.parts]
        options.update({name: check_record.decode(record[name]) for name in check.recorded})
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        credit = check.function(*arguments, **options)
    return float(credit), said.getvalue()


def master_cases(source: str, call: ast.Call) -> list:
    """The cases the master's cell tests: its own expression for them, evaluated here."""
    argument = call.args[1] if len(call.args) > 1 else None
    from viewcopy.notebook import checks

    namespace = {"viewcopy": SimpleNamespace(checks=checks)}  # what `viewcopy.checks` exports
    if isinstance(argument, ast.Name):
        for statement in ast.parse(source).body:
            if isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == argument.id for t in statement.targets
            ):
                return eval(compile(ast.Expression(statement.value), "<master>", "eval"), namespace)
        raise ValueError(f"the master cell never defines {argument.id}")
    if argument is None:
        raise ValueError("the master cell's classify_credit call names no cases")
    return eval(compile(ast.Expression(argument), "<master>", "eval"), namespace)
