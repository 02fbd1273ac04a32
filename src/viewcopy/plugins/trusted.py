"""The grader's own verdict on every check cell, recomputed outside the student's kernel.

An autograde preprocessor, run after the notebook executes and before nbgrader saves the grades. For
each graded test cell it reads the master's source from the gradebook (never the notebook's), finds
the `viewcopy.checks` call it ends with, takes that call's inputs from the record the cell handed
over (viewcopy.course.records), and computes the credit with the same function, in the grader's
process, against truth the grader measures. That credit replaces whatever the cell displayed:
printed or displayed fake scores, a silenced display, a patched torch or a replaced helper in the
kernel change nothing. A check cell with no record gets no credit, and says why.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

from nbformat.notebooknode import NotebookNode, from_dict
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution

from viewcopy.course import records
from viewcopy.course.handin import PARTS, written_sheet
from viewcopy.locking.file import read_lock
from viewcopy.locking.flow import LockStatus
from viewcopy.locking.judge import LockPolicy, judge

if TYPE_CHECKING:
    from viewcopy.notebook import checks

MAX_RECORD_BYTES = 1_000_000
CHECKS = (
    "prediction_credit", "rules_after_credit", "specificity_credit", "classify_credit",
    "next_credit", "production_credit",
)  # fmt: skip


class TrustedCredit(NbGraderPreprocessor):
    """Replace each check cell's credit by the grader's own computation of it."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources["nbgrader"]
        folder = Path(resources["metadata"]["path"])
        policy = LockPolicy.from_config(self.config)
        # every part's sheet as its answer cell writes it, never as computed
        sheets = {part.label.lower(): written_sheet(nb, part) for part in PARTS}

        def lock(part, parsed) -> LockStatus:
            record = read_lock(folder)
            return judge(policy, part, parsed, record, info["student"], info["assignment"])

        with Gradebook(info["db_url"]) as gradebook:
            for cell in nb.cells:
                if cell.cell_type != "code" or not is_grade(cell) or is_solution(cell):
                    continue
                source = gradebook.find_source_cell(
                    cell.metadata.nbgrader["grade_id"], info["notebook"], info["assignment"]
                ).source
                if (call := check_call(source)) is not None:
                    points = float(cell.metadata.nbgrader["points"])
                    rejudge(cell, source, call, points, lock, sheets, folder)
        return nb, resources


def check_call(source: str) -> ast.Call | None:
    """The `viewcopy.checks.<check>(...)` call a test cell ends with, if it ends with one."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        return None
    name = ast.unparse(last.value.func)
    return last.value if name in {f"viewcopy.checks.{c}" for c in CHECKS} else None


def rejudge(
    cell: NotebookNode,
    source: str,
    call: ast.Call,
    points: float,
    lock: checks.LockJudge,
    sheets: dict,
    folder: Path | None = None,
) -> None:
    """Put the grader's credit (and, when it differs, a note) in place of the cell's own."""
    check = ast.unparse(call.func).rsplit(".", 1)[1]
    record = records.find(cell.outputs)
    claimed = _claimed(cell.outputs)
    if any(o.output_type == "error" for o in cell.outputs):
        return  # nbgrader gives an erroring cell no credit; nothing to recompute
    credit, note = 0.0, ""
    if record is None or record.get("check") != check:
        note = (
            "The grader found no record of this check's inputs in the cell's output (the "
            "notebook changed how checks run or display), so it gives no credit."
        )
    elif len(json.dumps(record)) > MAX_RECORD_BYTES:
        note = "This check's record is too large to be one this lab wrote: no credit."
    else:
        try:
            credit, reasons = recompute(check, record, source, call, points, lock, sheets, folder)
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


def recompute(
    check: str,
    record: dict,
    source: str,
    call: ast.Call,
    points: float,
    lock: checks.LockJudge,
    sheets: dict,
    folder: Path | None = None,
) -> tuple[float, str]:
    """The check's own function, on the recorded inputs, in this process: its credit, and what it
    printed (the reasons, as the grader sees them). PREDICTIONS and NEXT_PREDICTIONS are
    `sheets`, what the hand-in's answer cells write out, whatever the kernel recorded; `folder`
    holds the hand-in's lock file."""
    from viewcopy.notebook import checks

    options = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg != "points"}
    data = {k: records.decode(v) for k, v in record.items() if k in ("rules_after", "answer")}
    data.update({k: sheet for k, sheet in sheets.items() if k in record})
    said = io.StringIO()
    with contextlib.redirect_stdout(said), checks.judged_outside(lock, folder):
        if check == "classify_credit":
            answers = checks.Answers.from_record(record)
            credit = checks.classify_credit(answers, master_cases(source, call), points=points)
        else:
            credit = getattr(checks, check)(**data, **options, points=points)
    return float(credit), said.getvalue()


def master_cases(source: str, call: ast.Call) -> list:
    """The cases the master's cell tests: its own expression for them, evaluated here."""
    argument = call.args[1] if len(call.args) > 1 else None
    namespace: dict = {"viewcopy": __import__("viewcopy")}
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
