"""The `viewcopy` command: the measured key, probe, next, copies and draw, and the instructor's
demo, grade, report, five, course check, lock service, hub and LMS. Each command is declared with
its arguments in the layer whose code it runs (`<layer>.commands`, an `engine.command.Command`);
this module only gathers them, and turns what they raise into exit statuses. Each imports what it
runs when it runs, so one that measures nothing never loads torch."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from viewcopy.course.assignment import CourseSettingError, NbgraderFailed
from viewcopy.course.commands import COURSE, LOCK_SERVICE
from viewcopy.demo.commands import DEMO
from viewcopy.display.commands import COPIES, DRAW, KEY, NEXT, PROBE
from viewcopy.engine.command import MEASUREMENT_FAILED, SubmissionsFailed, UsageError, by_name
from viewcopy.engine.devices import DeviceUnavailable
from viewcopy.engine.evidence import MeasurementDisagreement
from viewcopy.engine.expressions import ExpressionError
from viewcopy.five.commands import FIVE
from viewcopy.grading.commands import GRADE
from viewcopy.grading.grade import GradeError
from viewcopy.hub.commands import HUB
from viewcopy.lms.commands import LMS
from viewcopy.lms.errors import LmsError
from viewcopy.report.commands import REPORT

USAGE_ERROR = 2
COMMANDS = (
    KEY,
    PROBE,
    NEXT,
    COPIES,
    DRAW,
    DEMO,
    GRADE,
    LOCK_SERVICE,
    HUB,
    LMS,
    COURSE,
    REPORT,
    FIVE,
)
"""Every command, in the order `viewcopy --help` lists them."""


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
    chosen = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_to(chosen)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = by_name(COMMANDS)[args.command]
    if wrong := command.check(args):
        parser.error(wrong)
    try:
        print(command.run(args))
    except SubmissionsFailed as exc:
        print(exc)
        return 1
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # one more Ctrl-C must not kill the exit
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
    except NbgraderFailed as exc:  # its message names the nbgrader command and its output
        print(f"viewcopy {args.command}: {exc}", file=sys.stderr)
        return 1
    except MeasurementDisagreement as exc:
        print(f"viewcopy {args.command}: {MEASUREMENT_FAILED}: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        print(f"viewcopy {args.command}: {command.fails_as}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
