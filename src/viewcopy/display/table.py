"""The lab's tables as HTML built by escaping: every header, index label and value a student could
have written (a rule, an answer) is text in the page, never markup.

Rows are tinted right or wrong with inline styles, not a stylesheet, so the tints survive the
sanitizer that cleans what instructors read (viewcopy.display.safe_html). A tint sets its text
colour too, so a tinted row reads the same in a light, dark or high-contrast theme, and the tint
is never the only signal: the `correct` column says it in words. A table wider than the page
scrolls inside a region the keyboard reaches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import pandas as pd

RIGHT, WRONG = "#d8f3dc", "#ffd6d6"
INK = "#1b1b1b"
"""Text on a tint: 14:1 or more on both tints, whatever the theme's own text colour."""
CELL = "text-align: left; vertical-align: top"


def sheet_table(frame: pd.DataFrame, judged: bool, label: str = "table") -> str:
    """A sheet's frame, each row tinted right or wrong by its `correct` column once it is judged
    (the column also says it in words)."""
    tint = {"yes": RIGHT, "no": WRONG}
    tints = [tint.get(c, "") for c in frame["correct"]] if judged else None
    return html_table(frame, tints, label)


def html_table(
    frame: pd.DataFrame, tints: Sequence[str] | None = None, label: str = "table"
) -> str:
    """`frame` as an HTML table (index first), each row with its tint when `tints` is given, in
    a scrolling region named `label`."""
    index = frame.index.name or ""
    head = "".join(f"<th>{_text(name)}</th>" for name in [index, *frame.columns])
    rows = []
    for position, (name, values) in enumerate(
        zip(frame.index, frame.itertuples(index=False, name=None), strict=True)
    ):
        style = CELL + (_tinted(tints[position]) if tints and tints[position] else "")
        cells = "".join(f'<td style="{style}">{_text(v)}</td>' for v in values)
        rows.append(f'<tr><th style="{style}">{_text(name)}</th>{cells}</tr>')
    return (
        f'<div role="region" tabindex="0" aria-label="{_text(label)}" style="overflow-x:auto">'
        f'<table class="viewcopy-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _tinted(tint: str) -> str:
    return f"; background-color: {tint}; color: {INK}"


def _text(value: object) -> str:
    return escape(str(value))


@dataclass(frozen=True)
class FullTable:
    """A frame shown whole in a notebook: as `html_table`, never cut to pandas' column width."""

    frame: pd.DataFrame
    label: str = "table"

    def _repr_html_(self) -> str:
        return html_table(self.frame, label=self.label)

    def __repr__(self) -> str:
        return self.frame.to_string()
