"""The main job: a whole grading cycle on a synthetic class, with nbgrader's own machinery.

generate_assignment -> students fill and run the release -> `viewcopy grade` (nbgrader's autograde,
in parallel) -> generate_feedback -> export, in a fresh course folder built from this course's
`source/` and `nbgrader_config.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT, Grades, read_grades, run_nbgrader
from viewcopy.course.folder import Course, build_course
from viewcopy.demo.synthetic import Student, hand_in_class, synthetic_class
from viewcopy.grading.grade import grade
from viewcopy.grading.pool import SANDBOXED, GradingRun
from viewcopy.grading.record import outcomes_summary
from viewcopy.sandbox.bubblewrap import bwrap_problem


@dataclass(frozen=True)
class StudentGrades:
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


def student_grades(student: Student, grades: Grades) -> StudentGrades:
    """One synthetic student's row of the gradebook (read_grades)."""
    scores = {cell: score for cell, (score, _) in grades.items()}
    return StudentGrades(student, scores, {cell: top for cell, (_, top) in grades.items()})


def run_cycle(
    repo: Path,
    course: Path,
    students: Sequence[Student] | None = None,
    say: Callable[[str], None] = print,
    *,
    limit_s: float | None = None,
    progress: bool = True,
) -> list[StudentGrades]:
    """Generate, submit as the synthetic students, autograde, give feedback, export."""
    students = list(students or synthetic_class(repo))
    build_course(repo, course, {s.student_id: s.profile for s in students}, log=course_log(course))
    say(f"course folder: {course}")
    for student in students:
        say(f"  {student.student_id:<18} fills the release{' and runs it' if student.runs else ''}")
    say("the students run their notebooks, one kernel per core ...")
    hand_in_class(students, course, say=say)
    return grade_cycle(course, students, say, limit_s=limit_s, progress=progress)


def course_log(course: Path) -> Path:
    """Where the cycle's nbgrader commands log."""
    return course / "nbgrader.log"


def grade_cycle(
    course: Path,
    students: Sequence[Student],
    say: Callable[[str], None] = print,
    *,
    limit_s: float | None = None,
    progress: bool = True,
) -> list[StudentGrades]:
    """The instructor's half of the cycle on a course the students have handed in: `viewcopy
    grade` (sandboxed where bubblewrap works), feedback, export; the students' grades."""
    say("viewcopy grade (nbgrader autograde, in parallel) ...")
    sandbox = SANDBOXED
    if (problem := bwrap_problem()) is not None:
        say(f"no sandbox here ({problem}); these synthetic students are trusted code")
        sandbox = None
    run = GradingRun(Course.at(course), ASSIGNMENT, limit_s=limit_s, sandbox=sandbox)
    outcomes = grade(run, force=True, progress=progress, say=say)
    say(outcomes_summary(outcomes))
    say("nbgrader generate_feedback ...")
    log = course_log(course)
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force", log=log)
    run_nbgrader(course, "export", "--to", str(course / "grades.csv"), log=log)
    grades = read_grades(course)
    return [student_grades(s, grades[s.student_id]) for s in students]


def scores_table(results: Sequence[StudentGrades]) -> str:
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
