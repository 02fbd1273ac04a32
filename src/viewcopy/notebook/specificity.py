"""Whether an answer to 21-25 is specific, and the answer echoed as its grader reads it."""

from __future__ import annotations

import re
import textwrap

from viewcopy.exercise.part import rule_problem

SPECIFIC = re.compile(
    r"\bstrides?\b|\bstorage\b|\d[\d,.]*\s*(?:[kmgt]i?)?b(?:ytes?)?\b|\d[\d,.]*\s*bytes?\b",
    re.I,
)


ECHO_WIDTH = 92
"""Where a specificity cell wraps the answer it echoes (formgrader shows it without scrolling)."""


def specificity_points(answer: object, name: str, points: float) -> float:
    """`points` when the answer named `name` is specific: not empty, not a non-rule ("it
    depends", "I ran it": exercise.part.rule_problem), and naming strides, storage or a byte
    count; else none. Prints the answer echoed, and why."""
    if not isinstance(answer, str) or not answer.strip():
        print(f"{name} is empty: answer in one or two sentences.")
        return 0.0
    print(f"{name}:\n{echo(answer)}\n")
    if rule_problem(answer) is not None:
        print(f"{name} is only {answer.strip()!r}: say what it depends on.")
        return 0.0
    if not SPECIFIC.search(answer):
        print(f"{name} is not specific yet: mention strides, storage, or a byte count.")
        return 0.0
    print(f"{name} is specific. (Its content is graded by hand.)")
    return float(points)


def echo(answer: str, width: int = ECHO_WIDTH) -> str:
    """The answer as its grader reads it: each paragraph wrapped to `width`, indented, however
    long the lines it was typed in (a word longer than a line is broken)."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", answer.strip())]
    return "\n\n".join(
        textwrap.fill(p, width, initial_indent="    ", subsequent_indent="    ") for p in paragraphs
    )
