"""The main job: a whole grading cycle on a synthetic class, with nbgrader's own machinery.

generate_assignment -> students fill and run the release -> `viewcopy grade` (nbgrader's autograde,
in parallel) -> generate_feedback -> export, in a fresh course folder built from this course's
`source/` and `nbgrader_config.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from viewcopy.grader import DEFAULT_LIMIT_S, SANDBOXED, grade, summary
from viewcopy.sandbox import bwrap_problem
from viewcopy.synthetic import NOTEBOOK, Student, synthetic_class, write_submission

ASSIGNMENT = "view_or_copy"
COURSE_ID = "view_or_copy"
NOTEBOOK_ID = NOTEBOOK.removesuffix(".ipynb")


class CycleError(RuntimeError):
    """An nbgrader command failed; the message carries the end of its output."""


def nbgrader_env() -> dict[str, str]:
    """The environment for nbgrader: this Python's bin first (nbgrader calls `alembic` by name)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("NBGRADER_EXECUTION", None)
    return env


def nbgrader(course: Path, *args: str, log: Path | None = None) -> None:
    """Run one nbgrader command in the course folder; CycleError with its output on failure."""
    command = [str(Path(sys.executable).parent / "nbgrader"), *args]
    done = subprocess.run(command, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
    if log is not None:
        with log.open("a", encoding="utf-8") as sink:
            sink.write(f"$ nbgrader {' '.join(args)}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise CycleError(f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{tail}")


def unquoted_csv_safe(text: str) -> str:
    """`nbgrader export` writes CSV fields unquoted: a comma in a name would shift columns."""
    return text.replace(",", ";")


def prepare_course(repo: Path, course: Path) -> None:
    """A fresh course folder holding this course's config and master notebooks only."""
    if course.exists():
        shutil.rmtree(course)
    course.mkdir(parents=True)
    shutil.copy(repo / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(repo / "source", course / "source")


@dataclass(frozen=True)
class Result:
    """One student's grades, cell by cell, as the gradebook holds them."""

    student: Student
    scores: dict[str, float | None]
    max_scores: dict[str, float]

    @property
    def auto_total(self) -> float:
        return sum(s for s in self.scores.values() if s is not None)

    @property
    def needs_hand_grading(self) -> int:
        return sum(s is None for s in self.scores.values())


def enrol(course: Path, students: Sequence[Student]) -> None:
    """Add the students to the gradebook (what `nbgrader db student add` does, in one go)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        for student in students:
            gradebook.update_or_create_student(
                student.student_id, last_name=unquoted_csv_safe(student.profile)
            )


def read_gradebook(course: Path, students: Sequence[Student]) -> list[Result]:
    """Every student's score per grade cell, from nbgrader's SQLite gradebook."""
    from nbgrader.api import Gradebook

    results = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        for student in students:
            notebook = gradebook.find_submission_notebook(
                NOTEBOOK_ID, ASSIGNMENT, student.student_id
            )
            scores = {
                g.name: g.score if not g.needs_manual_grade else None for g in notebook.grades
            }
            max_scores = {g.name: g.max_score for g in notebook.grades}
            results.append(Result(student, scores, max_scores))
    return results


def run_cycle(
    repo: Path,
    course: Path,
    students: Sequence[Student] | None = None,
    say: Callable[[str], None] = print,
    *,
    limit_s: float = DEFAULT_LIMIT_S,
    progress: bool = True,
) -> list[Result]:
    """Generate, submit as the synthetic students, autograde, give feedback, export."""
    log = course / "nbgrader.log"
    prepare_course(repo, course)
    say(f"course folder: {course}")
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--create", "--force", log=log)
    students = list(students or synthetic_class())
    enrol(course, students)
    for student in students:
        say(f"  {student.student_id:<18} fills the release{' and runs it' if student.runs else ''}")
        folder = course / "submitted" / student.student_id / ASSIGNMENT
        write_submission(student, course / "release" / ASSIGNMENT, folder)
        (folder / "timestamp.txt").write_text("2026-11-29 09:00:00.000000 UTC\n")
    say("viewcopy grade (nbgrader autograde, in parallel) ...")
    sandbox = SANDBOXED
    if (problem := bwrap_problem()) is not None:
        say(f"no sandbox here ({problem}); these synthetic students are trusted code")
        sandbox = None
    outcomes = grade(
        course, ASSIGNMENT, force=True, limit_s=limit_s, progress=progress, sandbox=sandbox, say=say
    )
    say(summary(outcomes))
    say("nbgrader generate_feedback ...")
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--force", log=log)
    nbgrader(course, "export", "--to", str(course / "grades.csv"), log=log)
    return read_gradebook(course, students)


def table(results: Sequence[Result]) -> str:
    """A per-student table of autograded scores (hand-graded cells shown as `?`)."""
    if not results:
        return "no students"
    cells = list(results[0].max_scores)
    short = [c.replace("test_classify_", "classify_").replace("check_", "") for c in cells]
    header = ["student", *short, "auto total", "by hand"]
    rows = []
    for r in results:
        values = ["?" if r.scores[c] is None else f"{r.scores[c]:g}" for c in cells]
        rows.append([r.student.student_id, *values, f"{r.auto_total:g}", str(r.needs_hand_grading)])
    maxima = [
        "max",
        *(f"{results[0].max_scores[c]:g}" for c in cells),
        f"{sum(results[0].max_scores.values()):g}",
        "",
    ]
    widths = [max(len(row[i]) for row in [header, maxima, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            v.rjust(w) if i else v.ljust(w)
            for i, (v, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [header, maxima, *rows]
    )
