"""`viewcopy demo`, declared with its arguments (cli.py gathers it): a whole nbgrader cycle on a
synthetic class in a fresh course folder, then where to look and what to do next."""

from __future__ import annotations

import argparse
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, sqlite_file
from viewcopy.course.folder import Course
from viewcopy.engine.command import Command


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", default=".", help="the course repository (nbgrader_config.py)")
    parser.add_argument("--course", default="demo_course", help="the folder to build (replaced)")


def run_demo(args: argparse.Namespace) -> str:
    from viewcopy.demo.cycle import run_cycle, scores_table
    from viewcopy.five.questions import five, groups_line
    from viewcopy.report.build import build_report
    from viewcopy.report.files import report_folder, write_report
    from viewcopy.report.item_words import worth_a_look_line
    from viewcopy.report.summary import alike_line

    repo, course = Path(args.repo).resolve(), Path(args.course).resolve()
    if not Course(repo).config_file.is_file():
        raise OSError(
            f"{repo} has no nbgrader_config.py; run from the course repository or pass --repo"
        )
    results = run_cycle(repo, course, say=lambda line: print(line, flush=True))
    print("viewcopy report (the class report) ...", flush=True)
    report = build_report(course)
    folder = report_folder(course, ASSIGNMENT)
    write_report(report, folder)
    page = folder / "report.html"
    graded = Course(course)
    feedback = graded.feedback / "<student>" / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html")
    return (
        f"\n{scores_table(results)}\n\n"
        f"the five by hand: {groups_line(five(graded))}\n"
        f"           group: viewcopy five --course {course} (--apply GRADES.csv grades a group)\n"
        f"feedback:  {feedback}\n"
        f"grades:    {course / 'grades.csv'} (nbgrader export)\n"
        f"gradebook: {sqlite_file(graded.gradebook_url) or graded.gradebook_url}; answers "
        "21-25 (?) are graded by hand in formgrader\n"
        f"report:    {page} (again: viewcopy report --course {course})\n"
        f"           {worth_a_look_line(report.items)}\n"
        f"           {alike_line(report)}\n"
        f"next:      {repo / 'docs' / 'instructors.md'} (what to do next, step by step)"
    )


DEMO = Command(
    "demo",
    "a whole nbgrader cycle on a synthetic class, in a fresh course folder",
    add_demo_arguments,
    run_demo,
)
