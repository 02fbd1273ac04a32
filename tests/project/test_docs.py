"""The README and docs/ hold together: every relative link resolves (the file, and the heading an
#anchor names), every page of docs/ is linked, and the README stays a front page. That every
`viewcopy` command and option they show is real: tests/commands/test_docs_name_real_options.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.course_notebook import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
README_LINES = 120
"""The README's most lines: it is the front page, and what grows beyond it goes to docs/."""
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")


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


def test_the_readme_stays_a_front_page():
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_LINES


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
