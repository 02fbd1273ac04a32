"""`viewcopy five`, declared with its arguments (cli.py gathers it): answers 21-25 of a graded
course grouped by what they say, and with `--apply` each group graded once in the gradebook."""

from __future__ import annotations

import argparse
from pathlib import Path

from viewcopy.course.commands import add_assignment_arguments
from viewcopy.course.folder import Course
from viewcopy.engine.command import Command, UsageError
from viewcopy.five.groups import DEFAULT_THRESHOLD


def add_five_arguments(parser: argparse.ArgumentParser) -> None:
    add_assignment_arguments(parser, graded=True)
    parser.add_argument(
        "--question",
        type=int,
        action="append",
        help="a question's number, 21-25 in the shipped master (default: every one it asks)",
    )
    parser.add_argument("--format", default="table", choices=("table", "json"))
    parser.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help="cosine distance under which answers group (default %(default)s)",
    )
    parser.add_argument(
        "--apply",
        metavar="GRADES.csv",
        help="columns question,group,score,comment: each group's grade for all its members",
    )


def run_five(args: argparse.Namespace) -> str:
    from viewcopy.five.grades import GradesFileError, apply_grades, check_rows, read_rows
    from viewcopy.five.questions import FiveError, as_json, as_table, five, skipped_line

    course = Course.at(args.course)
    try:
        questions = five(course, args.assignment, args.question, args.threshold)
        if args.apply:
            grades = check_rows(read_rows(Path(args.apply)), questions)
            said = apply_grades(course, grades, args.assignment).sentence()
            skipped = questions[0].skipped if questions else ()
            return f"{said}\n{skipped_line(skipped)}" if skipped else said
    except (FiveError, GradesFileError) as exc:
        raise UsageError(str(exc)) from None
    return as_json(questions) if args.format == "json" else as_table(questions)


FIVE = Command(
    "five",
    "answers 21-25 grouped by what they say; --apply grades each group once",
    add_five_arguments,
    run_five,
)
