"""The course's constants and the helpers every course operation shares.

One place for the names a deployed course depends on (the assignment, its notebook, the grade
ids of its cells) and for what the demo, the tests and the benchmarks all do to a course folder:
build one from this repository, hand a notebook in, run nbgrader in it, read its gradebook.
nbgrader is imported only by the helpers that need it, so the names cost nothing to import.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

from viewcopy.exercise.next_predictions import NEXT
from viewcopy.exercise.predictions import TWENTY
from viewcopy.exercise.production import PRODUCTION
from viewcopy.files.course_layout import CONFIG_FILE, GRADEBOOK_FILE

ASSIGNMENT = "view_or_copy"
COURSE_ID = "view_or_copy"
"""The id the shipped nbgrader_config.py gives its course (the demo's and the hub's); a course's
own id is `course_id(course)`, read from its config."""
DEFAULT_COURSE = "default_course"
"""nbgrader's course id for a config that sets none (its Gradebook's default)."""
NOTEBOOK = "view_or_copy.ipynb"
NOTEBOOK_ID = NOTEBOOK.removesuffix(".ipynb")
LAB_IMPORTS = (
    "torch",
    "viewcopy.notebook",
    "viewcopy.display.explorer",
    "viewcopy.display.cost_figure",
)
"""What the notebook's kernel imports (its setup cell, and matplotlib for the cost figure): done
once in each grading worker's kernel template."""
LAB_MEASURED = "viewcopy.exercise.measured_once"
"""What every graded kernel measures alike: measured once in each grading worker's kernel
template, for the kernels forked from it."""

PREDICTED_PARTS = (TWENTY, NEXT, PRODUCTION)
"""The parts a student predicts, locks and then sees measured, in the notebook's order."""
NEXT_PREDICTIONS_CELL = NEXT.cell
"""The answer cell that assigns NEXT_PREDICTIONS."""
RULES_AFTER_CELL = "rules_after"
"""The answer cell that assigns RULES_AFTER."""
CLASSIFY_CELLS = ("test_classify_visible", "test_classify_hidden")
"""The test cells that grade classify: the twenty, then the hidden trap cases."""
MEASURING_CELLS = ("explorer", "what_did_you_pay", "profile_production")
"""The master's cells that measure for the student and carry no points: the diagram explorer,
what a copy costs (question 25, measured) and the production model's profile. Each is one call
that binds no name, and no graded cell reads what it does, so grading keeps the student's own
outputs of each instead of measuring again (viewcopy.plugins.KeepStudentMeasurements)."""

SUBMITTED_AT = "2026-11-29 09:00:00.000000 UTC"
"""The submission time written for hand-ins built here (nbgrader's timestamp.txt format)."""

Grades = dict[str, tuple[float | None, float]]
"""Grade cell -> (score, max score); the score is None while it waits for hand grading."""


class NbgraderFailed(RuntimeError):
    """An nbgrader command failed; the message carries the end of its output."""


class CourseSettingError(ValueError):
    """A setting in the course's nbgrader_config.py that the package cannot use, named
    (course.settings reads them)."""


def grade_id(cell: Mapping) -> str | None:
    """The nbgrader grade id of a notebook cell, None for a cell nbgrader does not manage."""
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def graded_points(notebook: Mapping) -> dict[str, float]:
    """Grade id -> nbgrader points of every graded cell of a notebook, in notebook order."""
    metas = (cell.get("metadata", {}).get("nbgrader", {}) for cell in notebook["cells"])
    return {m["grade_id"]: m.get("points", 0) for m in metas if m.get("grade") and "grade_id" in m}


def course_config(course: Path):
    """The traitlets config a course folder's nbgrader_config.py makes (empty without one); what
    the package reads of it, course.settings reads (the gradebook's URL, `gradebook_url`). The
    file is executed once per process while it and the environment it may read stay as they
    are; each caller gets its own copy."""
    from traitlets.config import Config

    path = (Path(course) / CONFIG_FILE).resolve()
    try:
        seen = path.stat()
    except FileNotFoundError:
        return Config()
    version = (seen.st_mtime_ns, seen.st_size, hash(frozenset(os.environ.items())))
    return copy.deepcopy(_executed_config(path, version))


@functools.lru_cache(maxsize=16)
def _executed_config(path: Path, version: tuple):
    """The config `path` makes, executed once for each `version` (the file's time and size, the
    environment); CourseSettingError, naming the file, where it does not run."""
    from traitlets.config.loader import PyFileConfigLoader

    try:
        return PyFileConfigLoader(path.name, str(path.parent)).load_config()
    except Exception as exc:  # noqa: BLE001 (any error of the course's own Python, named)
        lines = [
            f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)
        ]
        where = f", line {lines[-1]}" if lines else ""
        raise CourseSettingError(
            f"{path}{where} does not run ({type(exc).__name__}: {exc}): fix it, then run again"
        ) from None


def gradebook_url(course: Path) -> str:
    """The course's gradebook: `CourseDirectory.db_url` from its nbgrader_config.py (a PostgreSQL
    URL, say), else nbgrader's default, its GRADEBOOK_FILE in the course folder."""
    configured = course_config(course).get("CourseDirectory", {}).get("db_url")
    return configured or f"sqlite:///{Path(course).resolve() / GRADEBOOK_FILE}"


def configured_course_id(config) -> str:
    """The course id a config gives (`c.CourseDirectory.course_id`), nbgrader's default without
    one: the one setting every gradebook of the course is opened with."""
    return config.get("CourseDirectory", {}).get("course_id") or DEFAULT_COURSE


def course_id(course: Path) -> str:
    """The course id of the course folder `course` (its nbgrader_config.py)."""
    return configured_course_id(course_config(course))


def course_gradebook(course: Path, url: str | None = None):
    """nbgrader's Gradebook of the course, under the course's own id: at `url` (a copy to read,
    from `Course.gradebook_to_read`) or at the course's gradebook itself."""
    from nbgrader.api import Gradebook

    return Gradebook(url or gradebook_url(course), course_id(course))


def waiting_url(url: str, busy_timeout: int = 300) -> str:
    """Writers share one SQLite gradebook (grading workers, formgrader, `viewcopy five
    --apply`): wait for its lock instead of failing after 5 s."""
    if url.startswith("sqlite:///") and "?" not in url:
        return f"{url}?timeout={busy_timeout}"
    return url


def sqlite_file(url: str) -> Path | None:
    """The file of a `sqlite:///` gradebook URL (query dropped), None for a server database."""
    if not url.startswith("sqlite:///"):
        return None
    return Path(url.removeprefix("sqlite:///").split("?", 1)[0])


def nbgrader_env() -> dict[str, str]:
    """The environment for nbgrader: this Python's bin first (nbgrader calls `alembic` by name)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("NBGRADER_EXECUTION", None)
    return env


def run_nbgrader(course: Path, *args: str, log: Path | None = None) -> None:
    """Run one nbgrader command in the course folder; NbgraderFailed with its output on failure."""
    command = [str(Path(sys.executable).parent / "nbgrader"), *args]
    done = subprocess.run(command, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
    if log is not None:
        with log.open("a", encoding="utf-8") as sink:
            sink.write(f"$ nbgrader {' '.join(args)}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise NbgraderFailed(f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{tail}")


def enrol(course: Path, students: Mapping[str, str]) -> None:
    """Add students (id -> name) to the gradebook, as `nbgrader db student add` does."""
    with course_gradebook(course) as gradebook:
        for student_id, name in students.items():
            # `nbgrader export` writes CSV fields unquoted: a comma would shift the columns
            gradebook.update_or_create_student(student_id, last_name=name.replace(",", ";"))


def read_grades(course: Path, assignment: str = ASSIGNMENT) -> dict[str, Grades]:
    """Every student's grade cells for the lab's notebook, from the course's gradebook.

    A SQLite gradebook is read from a copy, which keeps the course's file untouched (nbgrader's
    Gradebook creates what it misses). A student enrolled without a graded submission maps to {};
    no gradebook file, to {}.
    """
    with gradebook_to_read(gradebook_url(course)) as url:
        return _grades_from(course, url, assignment) if url else {}


@contextlib.contextmanager
def gradebook_to_read(url: str) -> Iterator[str | None]:
    """The URL to read the gradebook at `url` without changing it: a temporary copy of a SQLite
    file (nbgrader's Gradebook creates what it misses), the server's URL otherwise, None where
    the SQLite file does not exist."""
    path = sqlite_file(url)
    if path is None:
        yield url
    elif not path.is_file():
        yield None
    else:
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{shutil.copy(path, folder)}"


def _grades_from(course: Path, url: str, assignment: str) -> dict[str, Grades]:
    from nbgrader.api import MissingEntry

    out: dict[str, Grades] = {}
    with course_gradebook(course, url) as gradebook:
        for student in gradebook.students:
            try:
                notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, assignment, student.id)
            except MissingEntry:
                out[student.id] = {}
                continue
            out[student.id] = {
                g.name: (None if g.needs_manual_grade else g.score, g.max_score)
                for g in notebook.grades
            }
    return out
