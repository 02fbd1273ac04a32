"""The `viewcopy` command: the measured key, probe, draw, and the instructor's demo, grade and
report. Each command imports what it runs, so one that measures nothing never loads torch."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, CourseSettingError
from viewcopy.display.formats import FORMATS, render, render_one
from viewcopy.engine.devices import KNOWN_DEVICES, DeviceUnavailable, resolve_devices
from viewcopy.engine.evidence import MeasurementDisagreement
from viewcopy.engine.expressions import ExpressionError
from viewcopy.exercise import catalogue
from viewcopy.five.groups import DEFAULT_THRESHOLD
from viewcopy.grading.grade import GradeError
from viewcopy.lms.commands import add_lms_parser, run_lms
from viewcopy.lms.errors import LmsError

USAGE_ERROR = 2
NEXT_COLUMNS = (
    "id",
    "family",
    "parent",
    "op",
    "verdict",
    "same_storage",
    "bytes_allocated",
    "copy_kernels",
    "shape",
    "stride",
)
"""What `viewcopy next` shows of each op, except as JSON (every field)."""


class _PrintVersion(argparse.Action):
    """`viewcopy --version`: the package's version, read only when asked (engine.version)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        kwargs.setdefault("help", "print the package's version (CHANGELOG.md) and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from viewcopy.engine.version import package_version

        print(f"viewcopy {package_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="viewcopy",
        description="Measure whether PyTorch operations return views or copies.",
        epilog="Each command's flags: viewcopy COMMAND --help. What to do next, after `viewcopy "
        "demo`: docs/instructors.md; every command and setting: docs/reference.md.",
    )
    parser.add_argument("--version", action=_PrintVersion)
    commands = parser.add_subparsers(dest="command", required=True)

    key = commands.add_parser("key", help="the measured table of the twenty, on x and variants")
    key.add_argument("--device", default="cpu", choices=(*KNOWN_DEVICES, "all"))
    key.add_argument("--format", default="table", choices=FORMATS)

    probe = commands.add_parser("probe", help="the evidence for any expression on x")
    probe.add_argument("expr", help="an expression on x, e.g. 'x[::2].t()'")
    probe.add_argument("--parent", default=catalogue.PARENT_EXPR, help="expression bound as x")
    probe.add_argument("--device", default="cpu", choices=KNOWN_DEVICES)
    probe.add_argument("--format", default="table", choices=("json", "table"))

    nxt = commands.add_parser("next", help="a draw of the next ops (or the whole pool), measured")
    nxt.add_argument("--seed", default="0", help="any text; the same seed, the same draw")
    nxt.add_argument("--count", type=int, default=10, help="how many ops (default %(default)s)")
    nxt.add_argument("--all", action="store_true", help="the whole pool (ignores seed and count)")
    nxt.add_argument("--format", default="table", choices=FORMATS)

    copies = commands.add_parser("copies", help="each line of your script that copied, measured")
    copies.add_argument("script", help="a Python file, run as __main__ under the profiler")
    copies.add_argument("--device", default="cpu", choices=KNOWN_DEVICES)
    copies.add_argument("--format", default="table", choices=("table", "csv", "json"))

    draw = commands.add_parser("draw", help="the stride/storage diagram of one expression")
    draw.add_argument("expr")
    draw.add_argument("--parent", default=catalogue.PARENT_EXPR)
    draw.add_argument("--device", default="cpu", choices=KNOWN_DEVICES)
    draw.add_argument("--out", required=True, help="the .svg file to write")

    demo = commands.add_parser(
        "demo", help="a whole nbgrader cycle on a synthetic class, in a fresh course folder"
    )
    demo.add_argument("--repo", default=".", help="the course repository (nbgrader_config.py)")
    demo.add_argument("--course", default="demo_course", help="the folder to build (replaced)")

    grade = commands.add_parser(
        "grade", help="nbgrader autograde for the whole class, in parallel, with progress"
    )
    grade.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    grade.add_argument("--course", default=".", help="the nbgrader course folder")
    grade.add_argument("--jobs", type=_positive, default=None, help="workers (default: cores)")
    grade.add_argument("--student", default="*", help="student ids to grade (shell pattern)")
    grade.add_argument("--force", action="store_true", help="regrade what is already graded")
    grade.add_argument(
        "--limit",
        type=_positive,
        default=None,
        help="seconds one submission may run before it is failed (default: derived from the "
        "master's graded run, at least 180)",
    )
    grade.add_argument(
        "--cell-limit",
        type=_positive,
        default=None,
        help="seconds one cell may run before nbgrader interrupts it (default: the course's "
        "c.Execute.timeout, else derived from the master's graded run, at least 60)",
    )
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run student code with your rights, as plain nbgrader does (not safe)",
    )
    grade.add_argument(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="grade on the Dask cluster of this scheduler (each hand-in one task; --jobs unused)",
    )
    grade.add_argument(
        "--devices",
        type=_devices,
        default=(),
        help="devices every hand-in's hidden tests must run on, e.g. cpu,cuda (cuda: on workers "
        "started with --resources GPU=1; default: whatever the grader has)",
    )

    service = commands.add_parser(
        "lock-service",
        help="run the course's lock service (records locks and reveals; signs receipts)",
    )
    service.add_argument("--data", help="its folder: key, id and records (required)")
    service.add_argument("--host", default="127.0.0.1")
    service.add_argument("--port", type=_positive, default=8470)
    actions = service.add_subparsers(dest="action")
    token = actions.add_parser("token", help="print a student's token for the lock service")
    token.add_argument("student")
    token.add_argument("--data", default=argparse.SUPPRESS, help="the service's folder")
    tokens = actions.add_parser(
        "tokens", help="every student's token, from the course's gradebook, as student,token CSV"
    )
    tokens.add_argument("--data", default=argparse.SUPPRESS, help="the service's folder")
    tokens.add_argument("--course", default=".", help="the nbgrader course folder")
    tokens.add_argument("--out", help="the CSV file to write, mode 0600 (default: stdout)")

    hub = commands.add_parser(
        "hub", help="the course on a JupyterHub on this machine, until Ctrl-C (docs/jupyterhub.md)"
    )
    hub.add_argument("--repo", default=".", help="the course repository (deploy/jupyterhub/)")
    hub.add_argument("--state", default="hub_state", help="its folder (kept between starts)")
    hub.add_argument("--port", type=_positive, default=8000, help="the hub's port on 127.0.0.1")
    hub.add_argument(
        "--students",
        help="comma-separated hub user names of the demo's students (default alice,bob)",
    )
    hub.add_argument(
        "--lti",
        metavar="REGISTRATION.json",
        help="log in with LTI 1.3 from the course's LMS instead of the demo's shared password: the "
        "platform's issuer, client_id, deployment_id, key_set_url, authorize_url, token_url "
        "(docs/lms.md); kept in the course's lms/ folder",
    )

    add_lms_parser(commands)

    course = commands.add_parser(
        "course", help="check a course folder: every inconsistency named with its fix"
    )
    course.add_argument("action", choices=("check",))
    course.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    course.add_argument("--course", default=".", help="the nbgrader course folder")

    report = commands.add_parser(
        "report", help="the class report of a graded course: misconceptions, locks, scores, traps"
    )
    report.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    report.add_argument("--course", default=".", help="the graded nbgrader course folder")
    report.add_argument("--out", help="where to write (default: <course>/reports/<assignment>)")

    five = commands.add_parser(
        "five", help="answers 21-25 grouped by what they say; --apply grades each group once"
    )
    five.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    five.add_argument("--course", default=".", help="the graded nbgrader course folder")
    five.add_argument(
        "--question",
        type=int,
        action="append",
        help="a question's number, 21-25 in the shipped master (default: every one it asks)",
    )
    five.add_argument("--format", default="table", choices=("table", "json"))
    five.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help="cosine distance under which answers group (default %(default)s)",
    )
    five.add_argument(
        "--apply",
        metavar="GRADES.csv",
        help="columns question,group,score,comment: each group's grade for all its members",
    )
    return parser


def run_key(args: argparse.Namespace) -> str:
    from viewcopy.exercise.measured import measure_catalogue

    devices = resolve_devices(args.device)
    return render([e.record() for e in measure_catalogue(devices)], args.format)


def run_probe(args: argparse.Namespace) -> str:
    from viewcopy.engine.measure import measure

    (device,) = resolve_devices(args.device)
    evidence = measure(args.expr, args.parent, device, parent_name=_parent_label(args.parent))
    return render_one(evidence.record(), args.format)


def run_next(args: argparse.Namespace) -> str:
    from viewcopy.exercise import next_ops

    if args.all:
        ops = next_ops.pool()
    else:
        try:
            ops = next_ops.draw(args.seed, args.count)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return render(next_ops.draw_table(ops), args.format, NEXT_COLUMNS)


def run_copies(args: argparse.Namespace) -> str:
    from viewcopy.engine.copies import COPY_COLUMNS, ScriptFailed, copies_in

    try:
        found = copies_in(Path(args.script), args.device)
    except ScriptFailed as exc:
        raise UsageError(str(exc)) from None
    if not found and args.format == "table":  # say it in words rather than an empty table
        return f"no line of {args.script} ran a copy kernel"
    return render([c.record() for c in found], args.format, COPY_COLUMNS)


def run_draw(args: argparse.Namespace) -> str:
    from viewcopy.display.diagram import Diagram
    from viewcopy.engine.measure import measure

    (device,) = resolve_devices(args.device)
    evidence = measure(args.expr, args.parent, device, parent_name=_parent_label(args.parent))
    Diagram(evidence).save(args.out)
    return f"{evidence.verdict}: wrote {args.out}"


def run_demo(args: argparse.Namespace) -> str:
    from viewcopy.demo.cycle import run_cycle, scores_table
    from viewcopy.five.questions import five, groups_line

    repo, course = Path(args.repo).resolve(), Path(args.course).resolve()
    if not (repo / "nbgrader_config.py").is_file():
        raise OSError(
            f"{repo} has no nbgrader_config.py; run from the course repository or pass --repo"
        )
    results = run_cycle(repo, course, say=lambda line: print(line, flush=True))
    feedback = course / "feedback" / "<student>" / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html")
    return (
        f"\n{scores_table(results)}\n\n"
        f"the five by hand: {groups_line(five(course))}\n"
        f"           group: viewcopy five --course {course} (--apply GRADES.csv grades a group)\n"
        f"feedback:  {feedback}\n"
        f"grades:    {course / 'grades.csv'} (nbgrader export)\n"
        f"gradebook: {course / 'gradebook.db'}; answers 21-25 (?) are graded by hand "
        "in formgrader\n"
        f"report:    viewcopy report --course {course}\n"
        f"next:      {repo / 'docs' / 'instructors.md'} (what to do next, step by step)"
    )


def run_grade(args: argparse.Namespace) -> str:
    from viewcopy.grading.grade import SANDBOXED, grade
    from viewcopy.grading.record import FAILED, outcomes_summary, record_path

    outcomes = grade(
        Path(args.course),
        args.assignment,
        jobs=args.jobs,
        pattern=args.student,
        force=args.force,
        limit_s=args.limit,
        cell_s=args.cell_limit,
        progress=not args.quiet,
        sandbox=None if args.no_sandbox else SANDBOXED,
        cluster=args.cluster,
        devices=args.devices,
    )
    record = record_path(Path(args.course).resolve(), args.assignment)
    text = f"{outcomes_summary(outcomes)}\nrecord: {record} (nbgrader's log per student beside it)"
    if any(o.status == FAILED for o in outcomes):
        raise SubmissionsFailed(text)
    return text


def run_five(args: argparse.Namespace) -> str:
    from viewcopy.five.grades import GradesFileError, apply_grades, check_rows, read_rows
    from viewcopy.five.questions import FiveError, as_json, as_table, five

    course = Path(args.course)
    try:
        questions = five(course, args.assignment, args.question, args.threshold)
        if args.apply:
            grades = check_rows(read_rows(Path(args.apply)), questions)
            return apply_grades(course, grades, args.assignment).sentence()
    except (FiveError, GradesFileError) as exc:
        raise UsageError(str(exc)) from None
    return as_json(questions) if args.format == "json" else as_table(questions)


def run_lock_service(args: argparse.Namespace) -> str:
    if args.action == "tokens":
        from viewcopy.course import class_tokens as tokens

        try:
            rows = tokens.class_tokens(Path(args.data), Path(args.course))
        except tokens.NoStudents as exc:
            raise UsageError(str(exc)) from None
        if args.out is None:
            return tokens.tokens_csv(rows).removesuffix("\n")  # print ends the last row
        tokens.write_tokens(rows, Path(args.out))
        return f"wrote {len(rows)} tokens to {args.out} (mode 0600: give each student only theirs)"

    from viewcopy.locking.service import issue_token, serve

    if args.action == "token":
        return issue_token(Path(args.data), args.student)
    serve(Path(args.data), args.host, args.port)
    return "lock service stopped"


def run_hub(args: argparse.Namespace) -> str:
    from viewcopy.hub.launch import HubDidNotStart, free_ports, port_in_use, serve
    from viewcopy.hub.state import prepare

    if args.lti and args.students is not None:
        raise UsageError(
            "--students is for the shared-password demo: with --lti the students are whoever "
            "the LMS launches as a Learner"
        )
    named = "alice,bob" if args.students is None else args.students
    students = [s.strip() for s in named.split(",") if s.strip()]
    if not students:
        raise UsageError("--students names no student: give hub user names, e.g. alice,bob")
    if port_in_use(args.port):
        raise UsageError(f"port {args.port} is in use on 127.0.0.1: pass --port with a free one")
    repo = Path(args.repo)
    registration = Path(args.lti) if args.lti else None
    try:
        state = prepare(repo, Path(args.state), args.port, free_ports(3), students, registration)
    except ValueError as bad:  # the registration file or the course's key file
        raise UsageError(str(bad)) from None
    try:
        return serve(repo, state, say=lambda text: print(text, flush=True))  # seen while it runs
    except HubDidNotStart as failed:
        raise UsageError(str(failed)) from None


def run_report(args: argparse.Namespace) -> str:
    from viewcopy.report.build import build_report
    from viewcopy.report.files import write_report
    from viewcopy.report.summary import terminal_summary

    course = Path(args.course)
    out = Path(args.out) if args.out else course / "reports" / args.assignment
    report = build_report(course, args.assignment)
    written = write_report(report, out)
    return f"{terminal_summary(report)}\nwrote {', '.join(p.name for p in written)} to {out}"


def run_course(args: argparse.Namespace) -> str:
    from viewcopy.course.check import CourseNotReady, check_course

    try:
        return check_course(Path(args.course).resolve(), args.assignment)
    except CourseNotReady as exc:
        raise SubmissionsFailed(str(exc)) from None


class SubmissionsFailed(Exception):
    """Some submissions could not be graded (as `nbgrader autograde`, the exit status says so)."""


class UsageError(Exception):
    """Arguments argparse accepts but the command cannot honour (a draw of 0 ops, say)."""


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _devices(text: str) -> tuple[str, ...]:
    chosen = tuple(d.strip().lower() for d in text.split(",") if d.strip())
    unknown = [d for d in chosen if d not in ("cpu", "cuda")]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"choose from cpu and cuda, comma-separated: {text!r}")
    return chosen


def _parent_label(parent_expr: str) -> str:
    return "x" if parent_expr == catalogue.PARENT_EXPR else parent_expr


COMMANDS = {
    "key": run_key,
    "probe": run_probe,
    "next": run_next,
    "copies": run_copies,
    "draw": run_draw,
    "demo": run_demo,
    "grade": run_grade,
    "report": run_report,
    "five": run_five,
    "course": run_course,
    "lock-service": run_lock_service,
    "hub": run_hub,
    "lms": run_lms,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "lock-service" and not args.data:
        parser.error("lock-service needs --data DIR (the service's key, id and records)")
    try:
        print(COMMANDS[args.command](args))
    except SubmissionsFailed as exc:
        print(exc)
        return 1
    except KeyboardInterrupt:
        print(f"viewcopy {args.command}: interrupted", file=sys.stderr)
        return 130
    except (
        ExpressionError,
        DeviceUnavailable,
        OSError,
        GradeError,
        UsageError,
        CourseSettingError,
    ) as exc:
        print(f"viewcopy {args.command}: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except LmsError as exc:
        print(f"viewcopy {args.command} {args.action}: {exc}", file=sys.stderr)
        return 1
    except (MeasurementDisagreement, RuntimeError) as exc:
        print(f"viewcopy {args.command}: measurement failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
