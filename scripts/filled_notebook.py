"""Run the release notebook as the synthetic class's perfect student fills it, every part, on the
torch of the Python running this; print one line and exit 1 unless it ran whole and silent.

Whole and silent: no cell raised, no cell wrote to stderr (nbgrader scores such a test cell 0),
the setup cell named this torch (the kernel is this Python), the lock reached production, and
every graded check the release runs gave full credit. Used by scripts/torch_matrix.sh.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
import torch

from viewcopy.course.assignment import NOTEBOOK, grade_id
from viewcopy.demo.synthetic import synthetic_class, write_submission
from viewcopy.locking.file import read_lock

ROOT = Path(__file__).resolve().parents[1]
CREDIT = re.compile(r"^(?:score|check|test|specific)_")


def text_of(output) -> str:
    if output.output_type == "stream":
        return output.text
    return str(output.get("data", {}).get("text/plain", output.get("evalue", "")))


def problems(notebook, folder: Path) -> tuple[list[str], int]:
    """What went wrong, and how many graded cells ran."""
    found, graded = [], 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        name = grade_id(cell) or "?"
        for output in cell.outputs:
            if output.output_type == "error":
                found.append(f"{name} raised {output.ename}: {output.evalue}")
            elif output.output_type == "stream" and output.name == "stderr":
                found.append(f"{name} wrote to stderr: {output.text.strip()[:120]}")
        if name == "setup" and f"torch {torch.__version__}" not in "".join(
            text_of(o) for o in cell.outputs
        ):
            found.append(f"setup did not name torch {torch.__version__}: another kernel ran")
        points = cell.metadata.get("nbgrader", {}).get("points")
        results = [o for o in cell.outputs if o.output_type == "execute_result"]
        if CREDIT.match(name) and points and results:
            graded += 1
            if float(text_of(results[-1])) != float(points):
                found.append(f"{name} gave {text_of(results[-1])} of {points}")
    lock = read_lock(folder)
    if lock is None or not lock.production:
        found.append("the lock never reached production")
    return found, graded


def main() -> int:
    for name in ("VIEWCOPY_LOCK_SERVICE", "VIEWCOPY_LOCK_TOKEN", "NBGRADER_EXECUTION"):
        os.environ.pop(name, None)
    (student,) = [s for s in synthetic_class(ROOT) if s.student_id == "perfect"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_submission(student, ROOT / "release" / "view_or_copy", folder / "hand_in")
        notebook = nbformat.read(folder / "hand_in" / NOTEBOOK, as_version=4)
        found, graded = problems(notebook, folder / "hand_in")
    cells = sum(c.cell_type == "code" for c in notebook.cells)
    if found:
        print(f"notebook: {len(found)} problems in {cells} cells: " + "; ".join(found))
        return 1
    print(f"notebook: {cells} cells silent, lock to production, {graded} graded cells full")
    return 0


if __name__ == "__main__":
    sys.exit(main())
