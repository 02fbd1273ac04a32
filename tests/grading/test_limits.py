"""The limits per cell and per hand-in (viewcopy.grading.limits): derived from the master's own
graded run, kept in the course and on this machine, measured again for a changed master, and
overridden by --cell-limit, the course's Execute.timeout and --limit."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import nbformat
import psutil
import pytest
from support.course_notebook import ROOT

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.course.folder import Course
from viewcopy.grading.limits import (
    GradingLimits,
    Limit,
    MasterRun,
    derive,
    grading_limits,
    kept_in_course,
    kept_on_machine,
    master_key,
)
from viewcopy.grading.record import GradeError
from viewcopy.grading.worker import load_api

KEPT = MasterRun("", total_s=30.0, slowest_cell_s=9.0)
"""A run this master never takes (it takes about 5 s): a limit from it was read, not measured."""


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course folder with the repository's config and master, and a cache of its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return a_course(tmp_path / "course")


def a_course(folder: Path) -> Course:
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", folder)
    shutil.copytree(ROOT / "source", folder / "source")
    return Course.at(folder)


def keep(course: Course, run: MasterRun) -> MasterRun:
    """`run` kept in the course, for the master as it is now (unsandboxed)."""
    kept = MasterRun(
        master_key(course, ASSIGNMENT, sandboxed=False), run.total_s, run.slowest_cell_s
    )
    path = kept_in_course(course, ASSIGNMENT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(kept)))
    return kept


def limits(course: Course, *, hand_in_s=None, cell_s=None, cuda=False) -> GradingLimits:
    return grading_limits(
        course, ASSIGNMENT, hand_in_s=hand_in_s, cell_s=cell_s, sandbox=None, cuda=cuda
    )


@contextlib.contextmanager
def no_kernel_left() -> Iterator[None]:
    """Fails where a process started in the block outlives it: the kernel that measured the
    master must be shut down (nbclient leaves alone a kernel whose manager it was given, unless
    told to clean it up)."""
    before = set(psutil.Process().children(recursive=True))
    yield
    started = [p for p in psutil.Process().children(recursive=True) if p not in before]
    alive = psutil.wait_procs(started, timeout=10)[1]
    assert alive == [], [p.cmdline() for p in alive]


def test_the_defaults_are_multiples_of_the_masters_run_with_generous_floors():
    assert derive(MasterRun("k", 5.0, 2.0), cuda=False) == GradingLimits(
        Limit(60, "derived from the master's slowest cell of 2.0 s"),
        Limit(180, "derived from the master's run of 5.0 s"),
    )
    slow = derive(MasterRun("k", 30.0, 9.0), cuda=False)
    assert (slow.cell.seconds, slow.hand_in.seconds) == (180, 600)
    cold = derive(MasterRun("k", 30.0, 9.0), cuda=True)
    assert (cold.cell.seconds, cold.hand_in.seconds) == (300, 720)
    assert cold.cell.source.endswith("+ 120 s for a cold CUDA start")


def test_a_kept_run_is_reused_by_the_course_and_by_another_course_on_this_machine(course, tmp_path):
    keep(course, KEPT)
    assert limits(course) == derive(KEPT, cuda=False)
    other = a_course(tmp_path / "other")  # the same master, nothing kept in it
    assert limits(other) == derive(KEPT, cuda=False)
    kept = json.loads(kept_in_course(other, ASSIGNMENT).read_text())  # kept in that course too
    assert (kept["total_s"], kept["slowest_cell_s"]) == (KEPT.total_s, KEPT.slowest_cell_s)


@pytest.mark.slow
def test_a_changed_master_is_measured_again(course):
    old = keep(course, KEPT)
    master = nbformat.read(course.master(ASSIGNMENT), as_version=4)
    master.cells.append(nbformat.v4.new_markdown_cell("A note added after the run was kept."))
    nbformat.write(master, course.master(ASSIGNMENT))
    with no_kernel_left():
        derived = limits(course)
    kept = json.loads(kept_in_course(course, ASSIGNMENT).read_text())
    assert kept["key"] != old.key and kept["key"] == master_key(course, ASSIGNMENT, False)
    assert 0 < kept["slowest_cell_s"] <= kept["total_s"] < KEPT.total_s
    assert derived == derive(MasterRun(**kept), cuda=False)
    assert json.loads(kept_on_machine(kept["key"]).read_text()) == kept


def test_the_instructors_limits_win_and_need_no_measurement(course):
    shutil.rmtree(course.source)  # nothing to measure: only the overrides can answer
    assert limits(course, hand_in_s=200, cell_s=50) == GradingLimits(
        Limit(50, "set by --cell-limit"), Limit(200, "set by --limit")
    )
    with pytest.raises(GradeError, match="set both --limit and --cell-limit"):
        limits(course, hand_in_s=200)
    with course.config_file.open("a") as config:
        config.write("\nc.Execute.timeout = 77\n")
    configured = limits(course, hand_in_s=200)
    assert configured.cell == Limit(77, "set by Execute.timeout in nbgrader_config.py")
    assert limits(course, hand_in_s=200, cell_s=50).cell.seconds == 50


def test_an_explicit_cell_limit_beside_a_derived_hand_in_limit(course):
    keep(course, KEPT)
    mixed = limits(course, cell_s=45)
    assert mixed.cell == Limit(45, "set by --cell-limit")
    assert mixed.hand_in == derive(KEPT, cuda=False).hand_in
    assert mixed.describe() == (
        "time: 45 s per cell (set by --cell-limit), "
        "600 s per hand-in (derived from the master's run of 30.0 s)"
    )


def test_a_grading_process_runs_each_cell_under_the_runs_cell_limit(course, monkeypatch):
    monkeypatch.chdir(course.root)
    assert load_api(course, None, cell_s=42).config.Execute.timeout == 42


def test_a_grading_process_validates_a_graded_notebook_once_unless_the_course_says(
    course, monkeypatch
):
    monkeypatch.chdir(course.root)
    assert load_api(course, None).config.NotebookExporter.optimistic_validation is True
    with (course.root / "nbgrader_config.py").open("a") as config:
        config.write("\nc.Exporter.optimistic_validation = False\n")
    config = load_api(course, None).config
    assert config.Exporter.optimistic_validation is False
    assert "optimistic_validation" not in config.NotebookExporter


@pytest.mark.sandbox
def test_the_master_is_measured_in_the_sandbox_as_hand_ins_run(course):
    """With nothing kept (a new machine, a new course), the master runs once in the sandbox, its
    output discarded, and the limits come from that run."""
    from support.sandboxing import sandbox_or_skip

    from viewcopy.grading.pool import SANDBOXED

    sandbox_or_skip()
    with no_kernel_left():
        derived = grading_limits(
            course, ASSIGNMENT, hand_in_s=None, cell_s=None, sandbox=SANDBOXED, cuda=False
        )
    kept = json.loads(kept_in_course(course, ASSIGNMENT).read_text())
    assert kept["key"] == master_key(course, ASSIGNMENT, True)
    assert 0 < kept["slowest_cell_s"] <= kept["total_s"] < KEPT.total_s
    assert derived == derive(MasterRun(**kept), cuda=False)
