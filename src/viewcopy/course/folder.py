"""`Course`: a course folder as every command reads it, made once per command and passed on.

It names the folders nbgrader and the package keep there (`source`, `release`, `submitted`,
`autograded`, `feedback`, `grade_logs/<assignment>`, `lms`), finds the hand-ins, reads each
hand-in's time (nbgrader collect's timestamp.txt, one parser), and holds the course's config:
its nbgrader_config.py is executed once per process (course.assignment.course_config).
"""

from __future__ import annotations

import fnmatch
import shutil
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    SUBMITTED_AT,
    configured_course_id,
    course_config,
    course_gradebook,
    enrol,
    gradebook_to_read,
    gradebook_url,
    run_nbgrader,
)
from viewcopy.course.settings import CourseSettings, course_settings
from viewcopy.files.course_layout import (
    AUTOGRADED,
    CONFIG_FILE,
    COURSE_DATA,
    FEEDBACK,
    GRADE_LOGS,
    GRADEBOOK_FILE,
    LMS,
    RELEASE,
    SOURCE,
    SUBMITTED,
    TIMESTAMP,
)


@dataclass(frozen=True)
class Course:
    """The course folder `root` (absolute when made by `at`, as every command makes it)."""

    root: Path

    @classmethod
    def at(cls, folder: Path | str) -> Course:
        """The course in `folder` (a command's --course, or the working folder)."""
        return cls(Path(folder).resolve())

    @property
    def config(self):
        """The traitlets config its nbgrader_config.py makes (empty without one)."""
        return course_config(self.root)

    @property
    def id(self) -> str:
        """The course id every gradebook of the course is opened with."""
        return configured_course_id(self.config)

    @property
    def settings(self) -> CourseSettings:
        """What the package reads of its config, checked (CourseSettingError names a bad one)."""
        return course_settings(self.config)

    @property
    def gradebook_url(self) -> str:
        return gradebook_url(self.root)

    def gradebook(self, url: str | None = None):
        """nbgrader's Gradebook of the course (at `url`: a copy to read)."""
        return course_gradebook(self.root, url)

    def gradebook_to_read(self) -> AbstractContextManager[str | None]:
        """A context giving the URL to read its gradebook at without changing it (a copy of a
        SQLite file), None where it has no gradebook yet."""
        return gradebook_to_read(self.gradebook_url)

    @property
    def data(self) -> tuple[Path, ...]:
        """What it holds beyond its config, none of it for a student's code (COURSE_DATA)."""
        return tuple(self.root / name for name in COURSE_DATA)

    @property
    def gradebook_file(self) -> Path:
        """nbgrader's default gradebook, a SQLite file in the folder (the gradebook unless the
        config names another: `gradebook_url`)."""
        return self.root / GRADEBOOK_FILE

    @property
    def config_file(self) -> Path:
        """Its nbgrader_config.py."""
        return self.root / CONFIG_FILE

    @property
    def source(self) -> Path:
        return self.root / SOURCE

    @property
    def release(self) -> Path:
        return self.root / RELEASE

    @property
    def submitted(self) -> Path:
        return self.root / SUBMITTED

    @property
    def autograded(self) -> Path:
        return self.root / AUTOGRADED

    @property
    def feedback(self) -> Path:
        return self.root / FEEDBACK

    @property
    def lms(self) -> Path:
        """Where the course keeps its LMS files (registration, key, link, people, journal)."""
        return self.root / LMS

    def master(self, assignment: str) -> Path:
        """The instructor's master notebook of `assignment`."""
        return self.source / assignment / NOTEBOOK

    def released(self, assignment: str) -> Path:
        """The notebook of `assignment` as nbgrader released it to students."""
        return self.release / assignment / NOTEBOOK

    def grade_logs(self, assignment: str) -> Path:
        """Where `viewcopy grade` and `viewcopy five` keep what they record of `assignment`."""
        return self.root / GRADE_LOGS / assignment

    def hand_in(self, student_id: str, assignment: str) -> Path:
        """The student's submitted folder of `assignment`."""
        return self.submitted / student_id / assignment

    def graded(self, student_id: str, assignment: str) -> Path:
        """The student's autograded folder of `assignment`: its last whole grading."""
        return self.autograded / student_id / assignment

    def hand_ins(self, assignment: str, pattern: str = "*") -> list[str]:
        """The ids of the students with a submission of `assignment`, matching the shell-style
        `pattern`; FileNotFoundError where the course has no submitted/ folder."""
        if not self.submitted.is_dir():
            raise FileNotFoundError(self.submitted)
        return sorted(
            p.name
            for p in self.submitted.iterdir()
            if (p / assignment).is_dir() and fnmatch.fnmatchcase(p.name, pattern)
        )

    def submitted_stamp(self, student_id: str, assignment: str) -> str | None:
        """The hand-in's time as nbgrader wrote it, None without one."""
        return stamp(self.hand_in(student_id, assignment))

    def submitted_at(self, student_id: str, assignment: str) -> datetime | None:
        """The hand-in's time (naive UTC, as nbgrader keeps it), None without a readable one."""
        return stamp_time(self.hand_in(student_id, assignment))

    def graded_at(self, student_id: str, assignment: str) -> datetime | None:
        """The time of the hand-in its last grading graded, None without a readable one."""
        return stamp_time(self.graded(student_id, assignment))


def build_course(
    repo: Path, course: Path, students: Mapping[str, str], *, log: Path | None = None
) -> None:
    """A fresh course folder from this repository's config and master, its release generated,
    and `students` (id -> name) enrolled."""
    if course.exists():
        shutil.rmtree(course)
    course.mkdir(parents=True)
    made, master = Course(course), Course(repo)
    shutil.copy(master.config_file, made.config_file)
    shutil.copytree(master.source, made.source)
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--create", "--force", log=log)
    enrol(course, students)


def stamp(folder: Path) -> str | None:
    """The time nbgrader wrote into a hand-in's `folder` (stripped), None without one."""
    path = folder / TIMESTAMP
    text = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    return text or None


def mark_submitted(folder: Path, at: str = SUBMITTED_AT) -> None:
    """Write a hand-in's time into its `folder`, as `nbgrader collect` does."""
    (folder / TIMESTAMP).write_text(f"{at}\n", encoding="utf-8")


def stamp_time(folder: Path) -> datetime | None:
    """`stamp(folder)` as nbgrader parses it, None without one or for one it cannot read."""
    from nbgrader.utils import parse_utc

    text = stamp(folder)
    try:
        return parse_utc(text) if text else None
    except ValueError:
        return None
