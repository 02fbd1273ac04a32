"""The course's settings, read from its nbgrader_config.py in one place and checked there.

The package's own settings are traitlets Configurables with help text: the lock service's
(`c.LockService`, `LockService`), what the LMS push sends (`c.LmsPush`), how the twenty are
credited (`c.PredictionScoring`: declared here, and the `PredictionScoring` plug-in that hands it
to the kernels is this class too) and the course's declaration of its graded parts and its own
next ops (`c.CourseDeclaration`; the points stay the master's metadata).
`course_settings` reads them, with the course id nbgrader's gradebook is kept under
(`c.CourseDirectory.course_id`, with nbgrader's default; its URL, `db_url`, is read by
course.assignment.gradebook_url), and says of a setting it does not know, or of a value not of
its type, which one it is, in one error. A plug-in's own
switch stays the plug-in's (`c.KeepStudentMeasurements.enabled`).

The scoring policy reaches the graded kernels as the environment variable VIEWCOPY_SCORING (the
plug-in sets it; the checks read and validate it in exercise.scoring.scoring_policy, the one place
that reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from traitlets import Bool, Dict, Enum, List, TraitError, Unicode
from traitlets.config import Config, Configurable

from viewcopy.course.assignment import CourseSettingError, configured_course_id
from viewcopy.exercise.graded_parts import (
    GRADED_PARTS,
    DeclarationError,
    GradedPart,
    declared_parts,
)
from viewcopy.exercise.next_ops import NextOp, declared_ops
from viewcopy.exercise.scoring import CARD, POLICIES
from viewcopy.locking.judge import LockPolicy


class LockService(Configurable):
    """The course's lock service as grading and the class report use it (`viewcopy lock-service
    --data DIR` serves it; docs/lock-service.md)."""

    data_dir = Unicode(
        "",
        help="The lock service's data folder (or a copy of it) on the machine that grades: the "
        "grader and the class report judge every lock against its records and key. Empty: the "
        "course runs no lock service, and a lock is the notebook's own file.",
    ).tag(config=True)
    unverified_locks_earn_credit = Bool(
        True,
        help="Whether a lock the lock service never recorded (and no receipt of it vouches for) "
        "earns credit, flagged 'not verified' in the class report; False gives it none.",
    ).tag(config=True)

    def policy(self) -> LockPolicy:
        folder = self.data_dir
        return LockPolicy(
            Path(folder).expanduser() if folder else None, self.unverified_locks_earn_credit
        )


class PredictionScoring(Configurable):
    """How the twenty are credited (exercise.scoring)."""

    policy = Enum(
        list(POLICIES),
        default_value=CARD,
        help="How the twenty are credited: 'card', the lab card's line (full credit from 16/20 "
        "right); or 'balanced', full credit from 80% of the views and 80% of the copies right "
        "(a constant sheet cannot pass).",
    ).tag(config=True)


class LmsPush(Configurable):
    """What `viewcopy lms push` sends the LMS (lms.push; docs/lms.md)."""

    partial_as_final = Bool(
        False,
        help="Whether a score whose answers 21-25 still await hand grading is sent as final "
        "(FullyGraded), so that an LMS that shows only final grades (Moodle) shows the "
        "autograded part until the hand grading is pushed; False sends it as PendingManual.",
    ).tag(config=True)


class CourseDeclaration(Configurable):
    """What the course declares of its lab beyond the master's cells (docs/adapting.md)."""

    parts = List(
        Dict(),
        help="The graded parts the opening table and the feedback group the master's graded "
        "cells into, in notebook order, each {'name': ..., 'cells': [grade ids], 'what': what "
        "the student does, 'minutes': its time budget, 'stretch': True for the stretch (optional)}"
        "; the points are each cell's nbgrader metadata. Empty: the shipped parts.",
    ).tag(config=True)
    next_ops = List(
        Dict(),
        help="The course's own operations for the next-op pool, each {'op': an expression on x, "
        "'family': one of the pool's families, 'parent': 'x' (default), 'x_colmajor', 'x_half' "
        "or 'act'}; measured like the rest, numbered C01... Empty: the shipped pool alone.",
    ).tag(config=True)


SETTINGS = (LockService, PredictionScoring, LmsPush, CourseDeclaration)
"""The package's own sections of a course's config."""


@dataclass(frozen=True)
class CourseSettings:
    """What the package reads of a course's config: how its locks are judged, how the twenty
    are credited, whether the LMS is sent partial grades as final, the course id its
    gradebook keeps it under, its graded parts and its own next ops."""

    lock: LockPolicy
    course_id: str
    scoring: str = CARD
    partial_as_final: bool = False
    parts: tuple[GradedPart, ...] = GRADED_PARTS
    next_ops: tuple[NextOp, ...] = ()


def course_settings(config: Config | None) -> CourseSettings:
    """The course's settings from its config (None: the defaults); CourseSettingError naming the
    first setting that is not one, or whose value is not of its type."""
    config = config if config is not None else Config()
    lock, scoring, push, declaration = (checked(config, section) for section in SETTINGS)
    return CourseSettings(
        lock=lock.policy(),
        scoring=scoring.policy,
        course_id=configured_course_id(config),
        partial_as_final=push.partial_as_final,
        parts=declared(declared_parts, declaration.parts, "parts"),
        next_ops=declared(declared_ops, declaration.next_ops, "next_ops"),
    )


def declared(read, entries: list, key: str):
    """`read(entries)`, a DeclarationError made a CourseSettingError naming the setting."""
    try:
        return read(entries)
    except DeclarationError as exc:
        raise CourseSettingError(
            f"c.CourseDeclaration.{key} in nbgrader_config.py: {exc}"
        ) from None


def checked(config: Config, section: type[Configurable]) -> Configurable:
    """The section's settings from `config`, each one checked: CourseSettingError for a name the
    section does not have, or a value of the wrong type."""
    name = section.__name__
    known = sorted(section.class_trait_names(config=True))
    settings = section()
    for key, value in config.get(name, {}).items():
        where = f"c.{name}.{key} in nbgrader_config.py"
        if key not in known:
            raise CourseSettingError(
                f"{where} is not a setting: {name}'s settings are {', '.join(known)}"
            )
        try:
            setattr(settings, key, value)
        except TraitError as exc:
            raise CourseSettingError(f"{where} cannot be {value!r}: {_expected(exc)}") from None
    return settings


def _expected(error: TraitError) -> str:
    """What a trait's error says it expected, without traitlets' wording of the instance."""
    text = str(error)
    said = text.split(" expected ", 1)
    return f"expected {said[1]}" if len(said) == 2 else text
