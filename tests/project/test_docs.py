"""The README and docs/ hold together: every relative link resolves (the file, and the heading an
#anchor names), every page of docs/ is linked, and every `viewcopy` command a shell block shows is
a command whose `--help` lists each flag shown."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from support.course_notebook import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
SHELL = {"bash", "sh", "shell", "console"}
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def prose(text: str) -> str:
    """The page without its code blocks and inline code."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The ids GitHub gives the page's headings."""
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6} +(.+?) *$", FENCE.sub("", path.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(prose(path.read_text())) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves_to_a_file_and_its_heading(page):
    broken = []
    for target in relative_links(page):
        name, _, anchor = target.partition("#")
        file = (page.parent / name).resolve() if name else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme_or_another_page():
    linked = {
        (page.parent / t.partition("#")[0]).resolve()
        for page in PAGES
        for t in relative_links(page)
        if t.partition("#")[0]
    }
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []


def test_the_checks_see_a_broken_anchor_and_code_spans_in_headings(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Grading a cohort: `viewcopy grade`\n\n[x](#nowhere) [y](page.md#grading)\n")
    assert anchors(page) == {"grading-a-cohort-viewcopy-grade"}
    assert relative_links(page) == ["#nowhere", "page.md#grading"]


def shown_commands() -> list[tuple[str, list[str], str]]:
    """(page, words after `viewcopy` up to the first flag, flags) of every `viewcopy` command in
    a shell block; a line indented under a command continues it."""
    found = []
    for page in PAGES:
        for language, body in FENCE.findall(page.read_text()):
            if language not in SHELL:
                continue
            command = None
            for line in body.splitlines():
                if command is not None and line.startswith(" ") and line.strip().startswith("["):
                    command[2] += " " + line.split(" #", 1)[0]
                    continue
                command = None
                code = line.split(" #", 1)[0]
                for part in re.split(r"&&|;|\s\|\s", code):
                    words = part.split()
                    if words[:1] == ["viewcopy"]:
                        command = [page.name, words[1:], part]
                        found.append(command)
    return [(name, words, text) for name, words, text in found]


@cache
def help_text(*command: str) -> str:
    script = Path(sys.executable).with_name("viewcopy")
    done = subprocess.run([str(script), *command, "--help"], capture_output=True, text=True)
    assert done.returncode == 0, (command, done.stderr)
    return done.stdout


def subcommands(help_output: str) -> set[str]:
    """The choices of the first `{a,b,c}` in a usage line."""
    choices = re.search(r"\{([\w,-]+)\}", help_output)
    return set(choices.group(1).split(",")) if choices else set()


def command_path(words: list[str]) -> tuple[str, ...]:
    """The (sub)commands a shown command names: `lock-service token STUDENT` -> both words."""
    path: tuple[str, ...] = ()
    for word in words:
        if word.startswith("-") or word not in subcommands(help_text(*path)):
            break
        path = (*path, word)
    return path


def test_the_docs_show_the_commands_they_document():
    shown = {tuple(command_path(words)) for _, words, _ in shown_commands()}
    assert {
        ("key",), ("probe",), ("draw",), ("next",), ("copies",), ("demo",), ("grade",),
        ("report",), ("five",), ("lock-service",), ("lock-service", "token"),
    } <= shown  # fmt: skip


def test_every_viewcopy_command_shown_exists_and_accepts_each_flag_shown():
    wrong = []
    for page, words, text in shown_commands():
        path = command_path(words)
        if words and not words[0].startswith("-") and not path:
            wrong.append(f"{page}: `{text.strip()}`: viewcopy has no command {words[0]!r}")
            continue
        listed = set(FLAG.findall(help_text(*path)))
        wrong += [
            f"{page}: `{text.strip()}`: `viewcopy {' '.join(path)} --help` does not list {flag}"
            for flag in FLAG.findall(text)
            if flag not in listed
        ]
    assert wrong == []


def test_the_command_check_sees_an_unknown_flag():
    assert "--frobnicate" not in set(FLAG.findall(help_text("grade")))
    assert command_path(["lock-service", "token", "alice", "--data", "DIR"]) == (
        "lock-service",
        "token",
    )
