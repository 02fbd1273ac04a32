"""An endless loop in a student's `classify`, graded under a limit per cell and the limit per
hand-in `viewcopy grade` derives from the master's own run (viewcopy.grading.limits): each cell
that calls it is interrupted at the cell limit and scores nothing, every other cell is graded, and
the hand-in costs its cells' limits, not the 900 s and 300 s per cell it once could. A `classify`
that waits on a process it started is freed alike, in a kernel forked warm or started fresh: the
interrupt reaches the kernel's children (viewcopy.sandbox.provisioner)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import nbformat
import pytest
from support.course_notebook import ROOT
from support.sandboxing import sandbox_or_skip
from support.the_class import synthetic_student

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, course_config, grade_id, read_grades
from viewcopy.course.folder import Course, build_course
from viewcopy.demo.synthetic import Student, hand_in_class
from viewcopy.engine.devices import available_devices
from viewcopy.grading.grade import GRADED, grade
from viewcopy.grading.limits import GradingLimits, Limit, derive, master_run
from viewcopy.grading.pool import SANDBOXED, GradingRun
from viewcopy.sandbox.warm_kernels import how_kernels_start

pytestmark = [pytest.mark.course, pytest.mark.sandbox]

sandbox_or_skip()
LOOPS = "def classify(op_result, parent):\n    while True:\n        pass\n"
CALLS_CLASSIFY = ("test_classify_visible", "test_classify_hidden")
WAITS = (
    "def classify(op_result, parent):\n"
    "    import os, signal\n"
    "    ended = os.system('sleep {token}')\n"
    "    if os.WIFSIGNALED(ended) and os.WTERMSIG(ended) == signal.SIGINT:\n"
    "        raise KeyboardInterrupt  # as a shell passes on the interrupt its child got\n"
    "    return 'view'\n"
)
"""Waits on a child: os.system ignores SIGINT while its child runs, so an interrupt that reaches
the kernel alone leaves the cell waiting until the hand-in's limit."""
CELL_S = 8


def test_an_endless_loop_costs_its_cells_limit_and_the_rest_is_graded(tmp_path):
    """The limit per cell is set short here (the derived one is at least 60 s, and its
    derivation is test_limits.py's); the one per hand-in is derived from the master's run,
    measured in the sandbox as `viewcopy grade` measures it."""
    graded_within_the_cells_limits(tmp_path / "course", LOOPS, warm=True)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_cell_waiting_on_its_child_is_freed_at_its_limit(tmp_path, warm):
    import psutil

    token = f"{1000 + uuid.uuid4().int % 1000}.{os.getpid()}"
    graded_within_the_cells_limits(tmp_path / "course", WAITS.format(token=token), warm)
    running = [p.info["cmdline"] for p in psutil.process_iter(["cmdline"])]
    assert ["sleep", token] not in running


def graded_within_the_cells_limits(course: Path, classify: str, warm: bool) -> None:
    """A hand-in whose `classify` never returns, graded: each cell calling it is interrupted at
    CELL_S and scores nothing, the rest is graded, the whole within the hand-in's limit."""
    perfect = synthetic_student("perfect")
    loops = Student("loops", "loops", {**perfect.cells, "classify": classify}, runs=False)
    build_course(ROOT, course, {loops.student_id: loops.profile})
    if not warm:
        with (course / "nbgrader_config.py").open("a") as config:
            config.write("\nc.WarmKernels.enabled = False\n")
    hand_in_class([loops], course)
    said: list[str] = []
    run = GradingRun(Course.at(course), ASSIGNMENT, cell_s=CELL_S)
    (outcome,) = grade(run, progress=False, say=said.append)
    cuda = "cuda" in available_devices()
    derived = derive(master_run(run.course, ASSIGNMENT, SANDBOXED), cuda=cuda)
    limits = GradingLimits(Limit(CELL_S, "set by --cell-limit"), derived.hand_in)
    started = how_kernels_start(SANDBOXED, available_devices(), course_config(course))
    assert ("forked from a template" in started) is warm, started
    assert said[0].endswith(f"{limits.describe()}; {started}"), said[0]
    assert "s per hand-in (derived from the master's run of" in said[0]
    assert outcome.status == GRADED, outcome.reason
    assert len(CALLS_CLASSIFY) * CELL_S <= outcome.seconds < derived.hand_in.seconds
    graded = nbformat.read(course / "autograded" / "loops" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for cell in (c for c in graded.cells if grade_id(c) in CALLS_CLASSIFY):
        errors = [o.get("ename") for o in cell.outputs if o.output_type == "error"]
        assert "CellTimeoutError" in errors, (grade_id(cell), errors)  # interrupted at the limit
    scores = {cell: score for cell, (score, _) in read_grades(course)["loops"].items()}
    assert all(scores[cell] == 0 for cell in CALLS_CLASSIFY), scores
    automatic = {c: v for c, v in scores.items() if not c.startswith("answer_")}
    assert None not in automatic.values(), automatic  # the rest of the hand-in was graded
