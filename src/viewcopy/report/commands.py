"""`viewcopy report`, declared with its arguments (cli.py gathers it): the class report of a
graded course, summed up in the terminal and written as CSV and figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from viewcopy.course.commands import add_assignment_arguments
from viewcopy.engine.command import Command


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    add_assignment_arguments(parser, graded=True)
    parser.add_argument("--out", help="where to write (default: <course>/reports/<assignment>)")


def run_report(args: argparse.Namespace) -> str:
    from viewcopy.report.build import build_report
    from viewcopy.report.files import report_folder, write_report
    from viewcopy.report.summary import terminal_summary

    course = Path(args.course)
    out = Path(args.out) if args.out else report_folder(course, args.assignment)
    report = build_report(course, args.assignment)
    written = write_report(report, out)
    names = ", ".join(p.name for p in written)
    return f"{terminal_summary(report)}\nwrote {names} to {out}\nopen {out / 'report.html'}"


REPORT = Command(
    "report",
    "the class report of a graded course: misconceptions, locks, scores, traps",
    add_report_arguments,
    run_report,
)
