"""`viewcopy course check`: a course folder read as nbgrader and the package will use it, and
every inconsistency named with its fix, before a term starts; `viewcopy grade` runs it first,
and `nbgrader generate_assignment` runs the master's part (`master_problems`, in WritePoints).

What it finds: a course setting the package cannot use (its declaration included: an unknown
family, a cell in two parts); no master; in the master, a grade id used twice, a graded cell
without positive points, a written question (`answer_N`) without its `question_N` cell (`viewcopy
five` shows that cell's wording); a declared part none of whose cells the master grades, a cell a
part names that the master does not grade, a graded cell no declared part holds; a next op of the
course's own that does not run; a release older than its master or its declaration (other graded
cells or points, a check call showing other points than the master gives, an opening cell that
does not carry the course's parts or next ops); a gradebook whose maximum is not the master's
total.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from viewcopy.course.assignment import (
    ASSIGNMENT,
    CourseSettingError,
    grade_id,
    graded_points,
)
from viewcopy.course.folder import Course
from viewcopy.exercise.graded_parts import (
    GRADED_PARTS,
    DeclarationError,
    GradedPart,
    declared_parts,
)
from viewcopy.exercise.next_ops import NextOp, declared_ops

if TYPE_CHECKING:
    from viewcopy.course.settings import CourseSettings

CHECKS = "viewcopy.checks."
"""The calls that show a graded cell's points in the student's kernel (`points=`)."""


@dataclass(frozen=True)
class Problem:
    """One inconsistency: where it is, what is wrong, and what to do."""

    where: str
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}; {self.fix}"


class CourseNotReady(Exception):
    """The course has problems: the message lists each with its fix."""

    def __init__(self, course: Path, problems: list[Problem]):
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        count = f"{len(problems)} problem{'s' * (len(problems) != 1)}"
        super().__init__(f"{course}: {count} to fix first:\n{lines}")


def master_problems(notebook: Mapping, where: str = "the master") -> list[Problem]:
    """What is wrong in a master notebook itself (no course needed)."""
    ids = [grade_id(cell) for cell in notebook["cells"] if grade_id(cell)]
    problems = [
        Problem(where, f"grade id {name!r} is used by {count} cells", "give each cell its own id")
        for name, count in Counter(ids).items()
        if count > 1
    ]
    for name, points in graded_points(notebook).items():
        if not isinstance(points, int | float) or points <= 0:
            problems.append(
                Problem(
                    where,
                    f"graded cell {name!r} has points {points!r}",
                    "give it a positive number of points in its nbgrader metadata",
                )
            )
        if name.startswith("answer_") and f"question_{name.removeprefix('answer_')}" not in ids:
            problems.append(
                Problem(
                    where,
                    f"written answer {name!r} has no question cell "
                    f"'question_{name.removeprefix('answer_')}'",
                    "add a markdown cell with that grade id holding the question "
                    "(`viewcopy five` shows its wording)",
                )
            )
    return problems


def points_arguments(source: str) -> list[ast.expr]:
    """The `points=` values of the check calls in a cell's source (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        keyword.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func).startswith(CHECKS)
        for keyword in node.keywords
        if keyword.arg == "points"
    ]


def shown_points(notebook: Mapping) -> dict[str, list[float]]:
    """Grade id -> the `points=` its check calls show in the student's kernel."""
    shown: dict[str, list[float]] = {}
    for cell in notebook["cells"]:
        for value in points_arguments("".join(cell.get("source", ""))):
            if isinstance(value, ast.Constant):
                shown.setdefault(grade_id(cell), []).append(value.value)
    return shown


def course_problems(course: Course, assignment: str = ASSIGNMENT) -> list[Problem]:
    """Every inconsistency of `course` for `assignment`, each with its fix."""
    import nbformat

    config = course.config_file
    if not config.is_file():
        return [Problem(str(course.root), "no nbgrader_config.py", "run in the course folder")]
    try:
        settings = course.settings
    except CourseSettingError as exc:
        return [Problem(str(config), str(exc), "fix the setting")]
    master_file = course.master(assignment)
    if not master_file.is_file():
        return [Problem(str(master_file), "no master notebook", "put the master there")]
    master = nbformat.read(master_file, as_version=4)
    problems = master_problems(master, str(master_file))
    points = graded_points(master)
    problems += declaration_problems(settings, points, str(config))
    regenerate = f"run `nbgrader generate_assignment {assignment} --force` in {course.root}"
    release_file = course.released(assignment)
    if release_file.is_file():
        release = nbformat.read(release_file, as_version=4)
        if graded_points(release) != points:
            problems.append(
                Problem(
                    str(release_file),
                    "the release is older than its master (other graded cells or points)",
                    regenerate,
                )
            )
        else:
            problems += _shown_problems(release, points, release_file)
        if release_declaration(release) != (settings.parts, settings.next_ops):
            problems.append(
                Problem(
                    str(release_file),
                    "the release is older than the course's declaration (its opening cell "
                    "carries other parts or next ops than c.CourseDeclaration)",
                    regenerate,
                )
            )
    with course.gradebook_to_read() as url:
        total = _gradebook_total(course, url, assignment) if url else None
    if total is not None and abs(total - sum(points.values())) > 1e-9:
        problems.append(
            Problem(
                "the gradebook",
                f"{assignment} is worth {total:g} points there and {sum(points.values()):g} in "
                "the master",
                regenerate,
            )
        )
    return problems


def declaration_problems(
    settings: CourseSettings, points: Mapping[str, float], where: str
) -> list[Problem]:
    """What the course's declaration gets wrong about its master (`points`: its graded cells):
    a part none of whose cells it grades, a cell it does not grade, a graded cell in no part (once
    the course declares its parts); and its own next ops that do not run."""
    problems = []
    if settings.parts != GRADED_PARTS:
        held = {name for part in settings.parts for name, _ in part.cells}
        for part in settings.parts:
            names = [name for name, _ in part.cells]
            if not any(name in points for name in names):
                problems.append(
                    Problem(
                        where,
                        f"part {part.name!r} holds none of the master's graded cells "
                        f"({', '.join(names)})",
                        "name its cells' grade ids, or remove the part",
                    )
                )
                continue
            problems += [
                Problem(
                    where,
                    f"part {part.name!r} names {name!r}, which the master does not grade",
                    "remove it from the part, or give the master that graded cell",
                )
                for name in names
                if name not in points
            ]
        problems += [
            Problem(
                where,
                f"graded cell {name!r} is in no part of c.CourseDeclaration.parts",
                "add it to the part it belongs to",
            )
            for name in points
            if name not in held
        ]
    return problems + [
        Problem(where, why, "fix or remove that op") for why in own_op_failures(settings.next_ops)
    ]


def own_op_failures(ops: Sequence[NextOp]) -> list[str]:
    """Why each of the course's own next ops does not run (measured on the CPU, as the draw is);
    a refusal by PyTorch is a verdict, not a failure. A course that declares none imports no torch
    here (every nbgrader command on a course checks its declaration)."""
    if not ops:
        return []
    from viewcopy.engine.measure import measure

    failures = []
    for op in ops:
        try:
            measure(op.op, op.parent_expr, "cpu", parent_name=op.parent)
        except Exception as exc:  # noqa: BLE001 (any failure to measure is the instructor's to see)
            failures.append(f"next op {op.id} ({op.op!r} on {op.parent}) does not run: {exc}")
    return failures


def release_declaration(release: Mapping) -> tuple[tuple[GradedPart, ...], tuple[NextOp, ...]]:
    """The parts and next ops the release's opening cell (`lab.parts(...)`) carries to the
    student's kernel: the shipped parts and none of its own unless it passes them."""
    arguments: dict[str, object] = {}
    for cell in release["cells"]:
        if grade_id(cell) != "parts":
            continue
        try:
            call = ast.parse("".join(cell.get("source", ""))).body[-1].value
            arguments = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        except (SyntaxError, IndexError, AttributeError, ValueError):
            return (), ()  # not a call the release writer makes: never the course's
    try:
        return (
            declared_parts(arguments.get("declared", ())),
            declared_ops(arguments.get("next_ops", ())),
        )
    except (DeclarationError, TypeError):
        return (), ()


def _shown_problems(release, points: Mapping[str, float], where: Path) -> list[Problem]:
    """Check calls whose `points=` is not the master's (a config without WritePoints)."""
    return [
        Problem(
            str(where),
            f"{name} shows points={shown[0]:g} where the master gives {points[name]:g}",
            "add WritePoints to c.GenerateAssignment.preprocessors in nbgrader_config.py (as the "
            "shipped one does), then regenerate the release",
        )
        for name, shown in shown_points(release).items()
        if name in points and any(abs(s - points[name]) > 1e-9 for s in shown)
    ]


def _gradebook_total(course: Course, url: str, assignment: str) -> float | None:
    from nbgrader.api import MissingEntry

    with course.gradebook(url) as gradebook:
        try:
            return float(gradebook.find_assignment(assignment).max_score)
        except MissingEntry:
            return None


def check_course(course: Course, assignment: str = ASSIGNMENT) -> str:
    """`viewcopy course check`: what was checked, or CourseNotReady listing every problem."""
    problems = course_problems(course, assignment)
    if problems:
        raise CourseNotReady(course.root, problems)
    return f"{course.root}: {assignment} is consistent (master, release, gradebook, settings)"
