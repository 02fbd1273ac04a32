"""`viewcopy grade`, declared with its arguments (cli.py gathers it): nbgrader's autograde for the
whole class, in parallel or on a Dask cluster, each hand-in sandboxed. The grading itself is
imported when it runs."""

from __future__ import annotations

import argparse

from viewcopy.course.commands import add_assignment_arguments
from viewcopy.engine.command import Command, SubmissionsFailed, positive


def add_grade_arguments(parser: argparse.ArgumentParser) -> None:
    add_assignment_arguments(parser)
    parser.add_argument(
        "--jobs", type=positive, default=None, help="workers (default: one a core and 4 hand-ins)"
    )
    parser.add_argument("--student", default="*", help="student ids to grade (shell pattern)")
    parser.add_argument("--force", action="store_true", help="regrade what is already graded")
    parser.add_argument(
        "--limit",
        type=positive,
        default=None,
        help="seconds one submission may run before it is failed (default: derived from the "
        "master's graded run, at least 180)",
    )
    parser.add_argument(
        "--cell-limit",
        type=positive,
        default=None,
        help="seconds one cell may run before nbgrader interrupts it (default: the course's "
        "c.Execute.timeout, else derived from the master's graded run, at least 60)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run student code with your rights, as plain nbgrader does (not safe)",
    )
    parser.add_argument(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="grade on the Dask cluster of this scheduler (each hand-in one task; --jobs unused)",
    )
    parser.add_argument(
        "--devices",
        type=_devices,
        default=(),
        help="devices every hand-in's hidden tests must run on, e.g. cpu,cuda (cuda: on workers "
        "started with --resources GPU=1; default: whatever the grader has)",
    )


def run_grade(args: argparse.Namespace) -> str:
    from viewcopy.course.folder import Course
    from viewcopy.course.hand_grades import hand_grades
    from viewcopy.grading.grade import grade
    from viewcopy.grading.pool import SANDBOXED, GradingRun
    from viewcopy.grading.record import (
        GRADED,
        NOT_GRADED,
        outcomes_summary,
        read_record,
        record_path,
    )

    run = GradingRun(
        Course.at(args.course),
        args.assignment,
        limit_s=args.limit,
        sandbox=None if args.no_sandbox else SANDBOXED,
        jobs=args.jobs,
        cluster=args.cluster,
        devices=args.devices,
        cell_s=args.cell_limit,
    )
    record = record_path(run.course, run.assignment)
    try:
        outcomes = grade(run, pattern=args.student, force=args.force, progress=not args.quiet)
    except KeyboardInterrupt:  # stopped: what it did and did not grade, from its record
        print(outcomes_summary(list(read_record(record).values())), flush=True)
        raise
    graded = [o.student_id for o in outcomes if o.status == GRADED]
    kept = hand_grades(run.course, run.assignment, graded).sentence()
    text = "\n".join(filter(None, (outcomes_summary(outcomes), kept)))
    text += f"\nrecord: {record} (nbgrader's log per student beside it)"
    if any(o.status in NOT_GRADED for o in outcomes):
        raise SubmissionsFailed(text)
    return text


def _devices(text: str) -> tuple[str, ...]:
    chosen = tuple(d.strip().lower() for d in text.split(",") if d.strip())
    unknown = [d for d in chosen if d not in ("cpu", "cuda")]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"choose from cpu and cuda, comma-separated: {text!r}")
    return chosen


GRADE = Command(
    "grade",
    "nbgrader autograde for the whole class, in parallel, with progress",
    add_grade_arguments,
    run_grade,
)
