"""Every `viewcopy` command the README and docs/ name in code, a span or a block, is a real command
of the parser (`viewcopy.cli.build_parser`, walked through its subcommands in this process), every
option shown with it is one of that command's, and a value shown for an option or an argument
with choices (`--format markdown`, `course check`) is one of them; and the docs name every command
and action the parser has."""

from __future__ import annotations

import argparse
import re
from functools import cache

import pytest
from support.course_notebook import ROOT

from viewcopy.cli import build_parser

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
SPAN = re.compile(r"(`+)([^`]+?)\1")
INVOCATION = re.compile(r"(?<![\w.-])(?:[\w.-]*/)?viewcopy(?=[ \t])")
"""`viewcopy` run as a command (`.venv/bin/viewcopy` too), not `viewcopy.cli` or a folder name."""
NOT_RUN = re.compile(r"\b(?:from|import|install)\s+$")
"""What before `viewcopy` makes it the package, not the command."""
END = re.compile(r"&&|;|\s\|\|?\s")
"""Where a shell line's command ends, outside [brackets] (there ` | ` is a choice, not a pipe)."""
OPTION = re.compile(r"^[\[(]*(--?[A-Za-z][\w-]*)(?:=(\S*))?")
PLACEHOLDER = re.compile(r"^[\[(]*[A-Z][A-Z0-9_]*\b|[<${]")
"""A word that stands for what the reader types (COMMAND, <course>, $VIEWCOPY_COURSE_ROOT)."""


def code_lines(text: str) -> list[str]:
    """The page's code: each line of its blocks, continuations joined (a trailing backslash, or an
    indented line of `[--options]` under a command), and each inline span on one line."""
    lines = []
    for body in FENCE.findall(text):
        for line in body.splitlines():
            if lines and (lines[-1].endswith("\\") or re.match(r"\s+\[", line)):
                lines[-1] = lines[-1].removesuffix("\\") + " " + line.strip()
            else:
                lines.append(line)
        lines.append("")  # a block's last line continues nothing after it
    lines += [" ".join(span.split()) for _, span in SPAN.findall(FENCE.sub("", text))]
    return lines


def invocations(line: str) -> list[str]:
    """The words after each `viewcopy` run in a line of code, to where its shell command ends."""
    starts = [m for m in INVOCATION.finditer(line) if not NOT_RUN.search(line[: m.start()])]
    ends = [m.start() for m in starts[1:]] + [len(line)] if starts else []
    return [
        " ".join(command_end(line[here.end() : end]).split())
        for here, end in zip(starts, ends, strict=True)
    ]


def command_end(rest: str) -> str:
    """The words of a shell command, up to where it ends."""
    depth = 0
    for at, char in enumerate(rest):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth <= 0 and END.match(rest, at):
            return rest[:at]
    return rest


def shown() -> list[tuple[str, str]]:
    """(page, words after `viewcopy`) for every `viewcopy` command the pages show in code."""
    return [
        (page.name, words)
        for page in PAGES
        for line in code_lines(page.read_text())
        for words in invocations(line)
    ]


@cache
def parser() -> argparse.ArgumentParser:
    return build_parser()


def subcommands(command: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def positionals(command: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in command._actions
        if not a.option_strings and not isinstance(a, argparse._SubParsersAction)
    ]


def bad_choices(value: str | None, action: argparse.Action) -> list[str]:
    """The alternatives of a value shown (`table|json`) that the action does not accept."""
    if value is None or action.choices is None or PLACEHOLDER.search(value):
        return []
    return [v for v in value.strip("[]().,;:").split("|") if v not in map(str, action.choices)]


def read(words: str) -> tuple[tuple[str, ...], list[str]]:
    """The command (and action) one shown `viewcopy` command names, and what in it the parser
    does not have (empty: all real)."""
    command, path, problems = parser(), (), []
    tokens, filled = words.split(), 0
    while tokens:
        token = tokens.pop(0)
        said = " ".join(("viewcopy", *path))
        if option := OPTION.match(token):
            flag, value = option.groups()
            action = command._option_string_actions.get(flag)
            if action is None:
                problems.append(f"`{said}` has no option {flag}")
                continue
            if action.nargs != 0 and value is None and tokens and not tokens[0].startswith("-"):
                value = None if token.endswith("]") else tokens.pop(0)  # `[--force]`: no value
            problems += [f"`{said} {flag}` does not take {v!r}" for v in bad_choices(value, action)]
        elif subcommands(command):
            if PLACEHOLDER.search(token):
                break  # `viewcopy COMMAND --help`: no one command to check further
            name = re.match(r"[\[(]*([\w-]*)", token).group(1)  # `grade's` names grade
            if name not in subcommands(command):
                return path, [*problems, f"`{said}` has no command {token!r}"]
            command, path, filled = subcommands(command)[name], (*path, name), 0
        elif filled < len(positionals(command)):
            action, filled = positionals(command)[filled], filled + 1
            problems += [f"`{said}` does not take {v!r}" for v in bad_choices(token, action)]
    return path, problems


def wrong(words: str) -> list[str]:
    return read(words)[1]


def every_command(command=None, path=()) -> list[tuple[str, ...]]:
    """Every command and action of the parser, by the words that name it."""
    found = []
    for name, sub in subcommands(command or parser()).items():
        found += [(*path, name), *every_command(sub, (*path, name))]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_viewcopy_command_a_page_shows_is_real_with_real_options(page):
    problems = [
        f"`viewcopy {words}`: {problem}"
        for name, words in shown()
        if name == page.name
        for problem in wrong(words)
    ]
    assert problems == []


def test_the_docs_name_every_command_and_action():
    named = {path[:n] for _, words in shown() if (path := read(words)[0]) for n in (1, 2)}
    assert [" ".join(c) for c in every_command() if c not in named] == []


def test_the_check_sees_a_wrong_command_option_or_value_and_reads_the_docs_shapes():
    assert wrong("grade --frobnicate") == ["`viewcopy grade` has no option --frobnicate"]
    assert wrong("lms nothing --course .") == ["`viewcopy lms` has no command 'nothing'"]
    assert wrong("key --format html") == ["`viewcopy key --format` does not take 'html'"]
    assert wrong("course inspect") == ["`viewcopy course` does not take 'inspect'"]
    for fine in (
        "lock-service --data DIR token alice",  # DIR is --data's value, not a command
        "lock-service token STUDENT --data /srv/locks",
        "key [--device cpu|cuda|mps|all] [--format table|csv|json|markdown]",
        "grade [ASSIGNMENT] [--force] [--jobs N]",
        "lms deployment list|add|remove [ID] [--course DIR]",
        "<command> --help",
        "--version",
    ):
        assert wrong(fine) == [], fine
    page = "`viewcopy five --apply` and\n```bash\nviewcopy grade X --jobs 2 \\\n  --force  # ok\n"
    page += "viewcopy five [--course DIR]\n      [--question N] && viewcopy report\n```\n"
    assert sorted(words for line in code_lines(page) for words in invocations(line)) == [
        "five --apply",
        "five [--course DIR] [--question N]",
        "grade X --jobs 2 --force # ok",
        "report",
    ]
    assert invocations("from viewcopy import lock; .venv/bin/viewcopy hub") == ["hub"]
    assert invocations("viewcopy hub [--students a | --lti R] | tee log") == [
        "hub [--students a | --lti R]"
    ]
    assert read("lock-service --data DIR token s1") == (("lock-service", "token"), [])
