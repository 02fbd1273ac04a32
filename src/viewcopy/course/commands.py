"""The course folder's commands, each declared with its arguments (cli.py gathers them):
`viewcopy course check` (every inconsistency named with its fix) and `viewcopy lock-service`, the
course's lock service (the locking layer's) with its students' tokens, `token` for one and
`tokens` for every student in the course's gradebook, which is why it is declared here."""

from __future__ import annotations

import argparse
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.engine.command import (
    Command,
    SubmissionsFailed,
    UsageError,
    add_actions,
    by_name,
    positive,
)


def add_assignment_arguments(parser: argparse.ArgumentParser, *, graded: bool = False) -> None:
    """The assignment (the course's own by default) and `--course`, as every command that works
    on a course folder takes them (`graded`: the command reads a graded course)."""
    parser.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    what = "the graded nbgrader course folder" if graded else "the nbgrader course folder"
    parser.add_argument("--course", default=".", help=what)


def add_course_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check",))
    add_assignment_arguments(parser)


def run_course(args: argparse.Namespace) -> str:
    from viewcopy.course.check import CourseNotReady, check_course
    from viewcopy.course.folder import Course

    try:
        return check_course(Course.at(args.course), args.assignment)
    except CourseNotReady as exc:
        raise SubmissionsFailed(str(exc)) from None


COURSE = Command(
    "course",
    "check a course folder: every inconsistency named with its fix",
    add_course_arguments,
    run_course,
)


def add_token_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("student")
    parser.add_argument("--data", default=argparse.SUPPRESS, help="the service's folder")


def run_token(args: argparse.Namespace) -> str:
    from viewcopy.locking.service import issue_token

    return issue_token(Path(args.data), args.student)


TOKEN = Command(
    "token", "print a student's token for the lock service", add_token_arguments, run_token
)


def add_tokens_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=argparse.SUPPRESS, help="the service's folder")
    parser.add_argument("--course", default=".", help="the nbgrader course folder")
    parser.add_argument("--out", help="the CSV file to write, mode 0600 (default: stdout)")


def run_tokens(args: argparse.Namespace) -> str:
    from viewcopy.course import class_tokens as tokens
    from viewcopy.course.folder import Course

    try:
        rows = tokens.class_tokens(Path(args.data), Course.at(args.course))
    except tokens.NoStudents as exc:
        raise UsageError(str(exc)) from None
    if args.out is None:
        return tokens.tokens_csv(rows).removesuffix("\n")  # print ends the last row
    tokens.write_tokens(rows, Path(args.out))
    return f"wrote {len(rows)} tokens to {args.out} (mode 0600: give each student only theirs)"


TOKENS = Command(
    "tokens",
    "every student's token, from the course's gradebook, as student,token CSV",
    add_tokens_arguments,
    run_tokens,
)
LOCK_SERVICE_ACTIONS = (TOKEN, TOKENS)


def add_lock_service_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="its folder: key, id and records (required)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=positive, default=8470)
    add_actions(parser, LOCK_SERVICE_ACTIONS, required=False)


def run_lock_service(args: argparse.Namespace) -> str:
    """Serve until Ctrl-C, or run the action asked for (`token`, `tokens`)."""
    if args.action is not None:
        return by_name(LOCK_SERVICE_ACTIONS)[args.action].run(args)
    from viewcopy.locking.service import serve

    serve(Path(args.data), args.host, args.port)
    return "lock service stopped"


def needs_data(args: argparse.Namespace) -> str | None:
    if not args.data:
        return "lock-service needs --data DIR (the service's key, id and records)"
    return None


LOCK_SERVICE = Command(
    "lock-service",
    "run the course's lock service (records locks and reveals; signs receipts)",
    add_lock_service_arguments,
    run_lock_service,
    check=needs_data,
)
