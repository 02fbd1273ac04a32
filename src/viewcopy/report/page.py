"""The class report as one HTML page (`report.html`): the twenty and the next ops as test items,
the reliability of the twenty, and each graded part's score distribution with its text
alternative. Every text a student wrote (a rule) and every name a course declared is escaped:
tables through display.table, everything else through html.escape. The figures are embedded as
data URIs, so the page is one file an instructor can mail."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape

import pandas as pd

from viewcopy.display.table import WRONG, html_table
from viewcopy.report.distributions import text_alternative
from viewcopy.report.item_words import (
    FLAGGED,
    common_wrong,
    correlation,
    discrimination,
    reliability,
    share_right,
    worth_a_look,
)
from viewcopy.report.numbers import (
    NEXT_ITEMS,
    TWENTY_ITEMS,
    ClassReport,
    ItemAnalysis,
    PartDistribution,
)

RULES_SHOWN = 5
"""Rules shown per item; the rest are counted."""
STYLE = (
    "body{font-family:sans-serif;max-width:80em;margin:1em auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse}th,td{border:1px solid #999;padding:.2em .4em}"
    "img{max-width:100%}figcaption{font-size:.9em}"
)


def report_page(report: ClassReport, figures: Sequence[tuple[PartDistribution, bytes]]) -> str:
    """The page: a figure (PNG bytes) per graded part's distribution, with its text
    alternative as alt text and caption."""
    judged = f"{report.judged} judged before looking"
    body = [
        f"<h1>Class report: {escape(report.assignment)}</h1>",
        f"<p>{len(report.students)} students, {judged}; truth measured on "
        f"{escape(', '.join(report.devices))} with torch {escape(report.torch)}.</p>",
        f"<p>{escape(reliability(report.reliability))}.</p>",
        "<h2>Worth a look</h2>",
        _worth_a_look(report.items),
        "<h2>The operations as test items</h2>",
        f"<p>{escape(EXPLAINED)}</p>",
        *(_part_table(report.items, part) for part in (TWENTY_ITEMS, NEXT_ITEMS)),
        "<h2>Scores per graded part</h2>",
        *(_figure(d, data) for d, data in figures),
    ]
    if not figures:
        body.append("<p>No gradebook scores.</p>")
    body.append(_similarity(report))
    title = escape(f"Class report: {report.assignment}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )


EXPLAINED = (
    "Share right: of the students counted for the op (the twenty: every hand-in judged before "
    "looking; a next op: those who drew it and kept their locked next sheet). Point-biserial: "
    "how far getting this op right goes with the rest of the part (-1 to 1). Upper-lower: the "
    "share right among the top 27% by the rest of the part minus among the bottom 27%, in "
    f"percentage points. Flagged: {FLAGGED}."
)


def _similarity(report: ClassReport) -> str:
    from viewcopy.report.similarity import TITLE, similarity_section

    if report.similar is None:
        return f"<h2>{TITLE}</h2><p>{escape(NOT_COMPARED)}</p>"
    return similarity_section(report.similar)


NOT_COMPARED = (
    "Not compared: the course has no release/ folder, and without the starter code every "
    "hand-in would look like every other (run nbgrader generate_assignment)."
)


def _worth_a_look(items: Sequence[ItemAnalysis]) -> str:
    found = worth_a_look(items)
    if not found:
        return "<p>None: too few students to measure discrimination.</p>"
    shown = (f"<li>{escape(f'{a.label}: {discrimination(a)}')}</li>" for a in found)
    return f"<ul>{''.join(shown)}</ul>"


def _part_table(items: Sequence[ItemAnalysis], part: str) -> str:
    rows = [a for a in items if a.part == part]
    if not rows:
        return f"<h3>{escape(part)}</h3><p>No students counted.</p>"
    frame = pd.DataFrame(
        {
            "op": [a.expr for a in rows],
            "share right": [share_right(a) for a in rows],
            "point-biserial": [_correlation(a) for a in rows],
            "upper-lower 27%": [_points(a.statistics.upper_lower) for a in rows],
            "most common wrong verdict": [common_wrong(a) for a in rows],
            "rules given for it": [_rules(a.rules) for a in rows],
            "flag": ["flagged" if a.flagged else "" for a in rows],
        },
        index=pd.Index([a.key for a in rows], name="item"),
    )
    tints = [WRONG if a.flagged else "" for a in rows]
    return f"<h3>{escape(part)}</h3>" + html_table(frame, tints, f"item analysis: {part}")


def _correlation(item: ItemAnalysis) -> str:
    stats = item.statistics
    return correlation(stats.point_biserial) if stats.point_biserial is not None else stats.why


def _points(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.0f} points"


def _rules(rules: Sequence[str]) -> str:
    shown = " | ".join(rules[:RULES_SHOWN])
    more = len(rules) - RULES_SHOWN
    return f"{shown} (and {more} more)" if more > 0 else shown


def _figure(distribution: PartDistribution, data: bytes) -> str:
    alt = escape(text_alternative(distribution), quote=True)
    source = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return f'<figure><img src="{source}" alt="{alt}"><figcaption>{alt}</figcaption></figure>'
