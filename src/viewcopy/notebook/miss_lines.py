"""The lines a classify test cell prints, and their parser (the class report reads graded outputs
without running anything): side by side so that format and parse cannot drift."""

from __future__ import annotations

import re
from typing import NamedTuple

from viewcopy.notebook.cases import CaseResult

_MISS = re.compile(r"  \[(?P<device>[^\]]+)\] (?P<hint>.+?): (?P<why>(?:said|raised|returned) .*)")
_SUMMARY = re.compile(r"classify right on (?P<right>\d+)/(?P<total>\d+) cases\.")


class Miss(NamedTuple):
    """One case classify missed, as its line says: the device, the case's hint, and why."""

    device: str
    hint: str
    why: str

    @property
    def answered(self) -> bool:
        """True when classify answered (wrongly); False when it raised or returned junk."""
        return self.why.startswith("said ")


def miss_line(result: CaseResult) -> str:
    """`  [device] hint: why`, on one line whatever the student's exception message holds."""
    why = result.problem or f"said {result.got!r}, measured {result.expected!r}"
    return " ".join(f"  [{result.case.device}] {result.case.hint}: {why}".splitlines())


def total_line(right: int, total: int) -> str:
    """The last line of a classify test's output."""
    return f"classify right on {right}/{total} cases."


def parse_misses(text: str) -> list[Miss] | None:
    """The misses a classify test cell's output lists; None when it holds no finished run.

    Only the lines just above the last total line count, as many as it says were missed:
    anything the student's classify printed came before them.
    """
    lines = text.splitlines()
    ends = [i for i, line in enumerate(lines) if _SUMMARY.fullmatch(line)]
    if not ends:
        return None
    total = _SUMMARY.fullmatch(lines[ends[-1]])
    missed = int(total["total"]) - int(total["right"])
    block = lines[ends[-1] - missed : ends[-1]] if 0 <= missed <= ends[-1] else []
    found = [_MISS.fullmatch(line) for line in block]
    if len(found) != missed or not all(found):
        return None
    return [Miss(**m.groupdict()) for m in found]
