"""Hand-graded answers with no line too long to read in formgrader, their meaning untouched.

Students type an answer as one long line; formgrader shows cell sources unwrapped, so the grader
scrolls sideways. `WrapAnswerLines` (an autograde sanitize step) breaks long lines inside the
string literals of hand-graded answer cells with a backslash-newline, which Python drops from the
string's value, and wraps long full-line comments. The result is checked: its syntax tree must be
the student's exactly (every string's value included), or the cell is left as it was.
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize

from nbgrader.utils import is_grade, is_solution
from traitlets import Integer

from viewcopy.plugins.base import CoursePreprocessor

WIDTH = 100
CONTINUATION = "\\\n"


def _fold_literal(text: str, column: int, width: int, tail: int) -> str:
    """A string token's text with backslash-newlines after spaces, so that no line (starting at
    `column`, and its last followed by `tail` more characters) runs past `width` where a space
    allows a break."""
    out: list[str] = []
    line_start = 0  # index in `out` where the current physical line starts
    length = column
    last_space = -1  # index in `out` just after the last breakable space of this line
    for index, char in enumerate(text):
        out.append(char)
        if char == "\n":
            line_start, length, last_space = len(out), 0, -1
            continue
        length += 1
        if length >= width and last_space > line_start:  # room for the backslash
            out.insert(last_space, CONTINUATION)
            line_start = last_space + 1
            length = len(out) - line_start
            last_space = -1
        if char == " " and index > 0 and text[index - 1] != "\\":
            last_space = len(out)
    if length + tail > width and last_space > line_start:
        out.insert(last_space, CONTINUATION)
    return "".join(out)


def _breakable(token: tokenize.TokenInfo) -> bool:
    prefix = token.string[: len(token.string) - len(token.string.lstrip("rRbBuUfF"))]
    return token.type == tokenize.STRING and not set(prefix.lower()) & {"r", "f", "b"}


def _wrap_comment(comment: str, indent: str, width: int) -> str:
    """A full-line comment (after `indent`) as several, each within `width` where words allow."""
    text = comment.lstrip("#").strip()
    folded = textwrap.fill(
        text, width, initial_indent=f"{indent}# ", subsequent_indent=f"{indent}# ",
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip
    return folded[len(indent) :]


def wrapped_source(source: str, width: int = WIDTH) -> str:
    """`source` with its long string lines and comments folded; `source` itself when nothing is
    too long, when it does not parse, or when folding would change what it means."""
    if all(len(line) <= width for line in source.splitlines()):
        return source
    try:
        before = ast.dump(ast.parse(source))
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError, ValueError):
        return source
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces, cursor = [], 0
    for token in tokens:
        (row, col), (end_row, end_col) = token.start, token.end
        start, end = offsets[row - 1] + col, offsets[end_row - 1] + end_col
        if _breakable(token) and any(len(lines[r]) > width for r in range(row - 1, end_row)):
            tail = len(lines[end_row - 1].rstrip("\n")) - end_col
            pieces += [source[cursor:start], _fold_literal(token.string, col, width, tail)]
            cursor = end
        elif token.type == tokenize.COMMENT and len(lines[row - 1].rstrip("\n")) > width:
            indent = lines[row - 1][:col]
            if not indent.strip():
                pieces += [source[cursor:start], _wrap_comment(token.string, indent, width)]
                cursor = end
    folded = "".join(pieces) + source[cursor:]
    try:
        same = ast.dump(ast.parse(folded)) == before
    except SyntaxError:
        same = False
    return folded if same else source


class WrapAnswerLines(CoursePreprocessor):
    """Fold long lines in hand-graded answer cells (code cells that are graded solutions)."""

    width = Integer(WIDTH, help="The longest line a hand-graded answer keeps").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and is_grade(cell) and is_solution(cell):
            cell.source = wrapped_source(cell.source, self.width)
        return cell, resources
