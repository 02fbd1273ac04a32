"""What a `viewcopy` command is, as the layer that owns it declares it beside its code: its name,
its help, its arguments and the function it runs (`Command`, as nbgrader's apps declare theirs),
the errors a command raises for cli.py to turn into an exit status (`UsageError`,
`SubmissionsFailed`), and the argument type several commands share (`positive`). Each layer's
`commands` module declares its own; cli.py only gathers them. A module that declares arguments
imports torch only inside what it runs, so `viewcopy --help` never loads it."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MEASUREMENT_FAILED = "measurement failed"
"""How cli.py names an error of PyTorch's, or measurements that disagree, in a measuring command."""


def _fits(args: argparse.Namespace) -> None:
    """No check beyond argparse's own."""


@dataclass(frozen=True)
class Command:
    """One `viewcopy` command, or one action of a command (`viewcopy lms push`)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the command's arguments (and its actions, if it has any) to its parser."""
    run: Callable[[argparse.Namespace], str]
    """Runs it on the parsed arguments; returns what to print."""
    check: Callable[[argparse.Namespace], str | None] = _fits
    """What argparse cannot check: a sentence when the arguments do not go together, said as
    argparse says its own (usage, exit status 2), before the command runs."""
    fails_as: str = "failed"
    """What cli.py calls an error the command did not foresee (a RuntimeError): "measurement
    failed" for the commands that measure PyTorch."""

    def add_to(self, subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        """Add the command and its arguments to a parser's subcommands."""
        parser = subparsers.add_parser(self.name, help=self.help)
        self.add_arguments(parser)
        return parser


def add_actions(
    parser: argparse.ArgumentParser, actions: Sequence[Command], *, required: bool = True
) -> None:
    """Give a command its actions (`viewcopy lms keys`, ...), chosen as `args.action`."""
    chosen = parser.add_subparsers(dest="action", required=required)
    for action in actions:
        action.add_to(chosen)


def by_name(commands: Sequence[Command]) -> dict[str, Command]:
    """The commands, each under its name (names are unique)."""
    named = {command.name: command for command in commands}
    assert len(named) == len(commands), [c.name for c in commands]
    return named


class UsageError(Exception):
    """Arguments argparse accepts but the command cannot honour (a draw of 0 ops, say)."""


class SubmissionsFailed(Exception):
    """Some submissions could not be graded (as `nbgrader autograde`, the exit status says so)."""


def positive(text: str) -> int:
    """An argument that counts something: a whole number, at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
