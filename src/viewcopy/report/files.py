"""The class report's files: every number in one CSV, one PNG per figure and per graded part's
score distribution, and report.html (report.page) with the item analysis and the distributions.

Each figure is one function returning a matplotlib Figure (no pyplot): no GUI and no global
backend are needed; `Figure.savefig` writes PNG with Agg.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from io import BytesIO, StringIO
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from viewcopy.course.assignment import CLASSIFY_CELLS
from viewcopy.exercise.predictions import VERDICT_CHOICES
from viewcopy.exercise.scoring import PASS_MARK
from viewcopy.files.atomic import write_atomically
from viewcopy.report.numbers import ClassReport, PartDistribution
from viewcopy.report.page import report_page
from viewcopy.report.rows import rows

WIDTH = 9.0
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3")
COLORS = dict(zip(VERDICT_CHOICES, PALETTE, strict=True))


def _figure(height: float) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(WIDTH, height), layout="constrained")
    return figure, figure.add_subplot()


def _counting(axis) -> None:
    """Students are counted in whole numbers."""
    axis.set_major_locator(MaxNLocator(integer=True))


def _nothing(axes: Axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes)
    axes.set_axis_off()


def misconception_map(report: ClassReport) -> Figure:
    """Per item, the students who mispredicted it before looking, split by what they said."""
    figure, axes = _figure(6.5)
    items = list(reversed(report.misconceptions))
    labels = [f"{m.item}  {m.expr}  (truth: {m.truth})" for m in items]
    left = [0] * len(items)
    for verdict in VERDICT_CHOICES:
        counts = [m.said.get(verdict, 0) for m in items]
        if any(counts):
            axes.barh(labels, counts, left=left, color=COLORS[verdict], label=f"said {verdict}")
            left = [a + b for a, b in zip(left, counts, strict=True)]
    axes.set_xlim(0, max(1, report.judged))
    axes.set_xlabel(f"students who mispredicted it (of {report.judged} judged before looking)")
    axes.set_title("Misconception map (truth measured on this machine)")
    _counting(axes.xaxis)
    if any(left):
        axes.legend(loc="lower right")
    return figure


def lock_status(report: ClassReport) -> Figure:
    """How many students locked and kept their predictions, changed them, or never locked."""
    figure, axes = _figure(3.2)
    counts = report.lock_counts
    bars = axes.barh(list(reversed(counts)), list(reversed(counts.values())), color="#4c72b0")
    axes.bar_label(bars, padding=3)
    axes.set_xlim(0, max(1, len(report.students)) * 1.1)
    axes.set_xlabel("students")
    axes.set_title("Predictions and the lock")
    _counting(axes.xaxis)
    return figure


def score_histogram(report: ClassReport) -> Figure:
    """Predictions right before looking (0 unless locked and unchanged), and autograded totals."""
    figure = Figure(figsize=(WIDTH, 3.6), layout="constrained")
    left, right = figure.subplots(1, 2)
    students = report.handed_in
    left.hist([s.credited for s in students], bins=range(22), align="left", color="#4c72b0")
    left.axvline(PASS_MARK - 0.5, color="#c44e52", linestyle="--", label=f"{PASS_MARK}/20")
    left.legend(loc="upper center")
    _counting(left.yaxis)
    passing = sum(s.passes for s in students)
    left.set_title(f"Right before looking: {passing}/{len(students)} reach {PASS_MARK}/20")
    left.set_xlabel("predictions right (0 when not locked or changed after)")
    left.set_ylabel("students")
    left.set_xlim(-0.8, 20.8)
    graded = [s for s in students if s.grades]
    if graded:
        top = max(s.max_total for s in graded)
        right.hist([s.auto_total for s in graded], bins=10, range=(0, top), color="#55a868")
        right.set_title(f"Autograded totals (of {top:g}; answers 21-25 by hand)")
        right.set_xlabel("points")
        _counting(right.yaxis)
    else:
        _nothing(right, "no gradebook scores")
    return figure


def trap_misses(report: ClassReport, *, top: int = 15) -> Figure:
    """The classify test cases that catch the most students (wrong answers, then crashes)."""
    traps = list(report.traps[:top])
    figure, axes = _figure(1.2 + 0.35 * max(len(traps), 3))
    if not traps:
        _nothing(
            axes, "no classify case was missed" if report.classify_runs else "no classify tests"
        )
        return figure
    traps.reverse()
    short = dict(zip(CLASSIFY_CELLS, ("the twenty", "hidden"), strict=True))
    labels = [f"[{t.device}] {t.hint} ({short.get(t.cell, t.cell)})" for t in traps]
    wrong = [len(t.wrong) for t in traps]
    axes.barh(labels, wrong, color="#c44e52", label="answered wrong")
    axes.barh(
        labels,
        [len(t.failed) for t in traps],
        left=wrong,
        color="#bbbbbb",
        label="raised, or not 'view'/'copy'",
    )
    runs = max(report.classify_runs.values(), default=0)
    axes.set_xlim(0, max(1, runs))
    axes.set_xlabel(f"students caught (of {runs} whose classify tests ran)")
    axes.set_title("Classify cases that catch the most students")
    _counting(axes.xaxis)
    axes.legend(loc="lower right")
    return figure


def specificity(report: ClassReport) -> Figure:
    """The share of answers to 21-25 that are specific (strides, storage or a byte count)."""
    figure, axes = _figure(3.2)
    questions = report.specificity
    bars = axes.bar([str(q.item) for q in questions], [q.fraction for q in questions])
    axes.bar_label(bars, labels=[f"{q.specific}/{q.graded}" for q in questions], padding=2)
    axes.set_ylim(0, 1.15)
    axes.set_xlabel("answer")
    axes.set_ylabel("share specific")
    axes.set_title("The dangerous five: answers that name strides, storage or bytes")
    return figure


def transfer(report: ClassReport) -> Figure:
    """Per family, the share right on the twenty against the share right on the next ops."""
    figure, axes = _figure(3.6)
    families = [f for f in report.transfer if f.next_total]
    if not families:
        _nothing(axes, "no next-op sheets to compare")
        return figure
    positions = range(len(families))
    twenty = [f.twenty_share or 0 for f in families]
    axes.bar([p - 0.2 for p in positions], twenty, width=0.4, label="the twenty", color="#4c72b0")
    nexts = [f.next_share for f in families]
    axes.bar([p + 0.2 for p in positions], nexts, width=0.4, label="next ops", color="#dd8452")
    axes.set_xticks(list(positions), [f.family for f in families], rotation=20)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("share right")
    memorised = sum(s.memorised for s in report.students)
    axes.set_title(f"Transfer by family (worst first); {memorised} student(s) memorised")
    axes.legend(loc="lower right")
    return figure


def distribution(part: PartDistribution) -> Figure:
    """One graded part's scores: students per score bin (report.distributions says it in
    words)."""
    figure, axes = _figure(2.8)
    bins = part.bins
    labels = [f"{low:g}-{high:g}" for low, high, _ in bins]
    bars = axes.bar(labels, [count for _, _, count in bins], color="#4c72b0")
    axes.bar_label(bars, padding=2)
    axes.set_ylim(0, max(1, *(count for _, _, count in bins)) * 1.2)
    axes.set_xlabel(f"points (of {part.points:g}; each bin holds its low end)")
    axes.set_ylabel("students")
    waiting = f"; {part.waiting} wait for a score" if part.waiting else ""
    axes.set_title(f"{part.part}: {len(part.scores)} students scored{waiting}")
    _counting(axes.yaxis)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


FIGURES: dict[str, Callable[[ClassReport], Figure]] = {
    "misconceptions": misconception_map,
    "lock_status": lock_status,
    "scores": score_histogram,
    "trap_misses": trap_misses,
    "specificity": specificity,
    "transfer": transfer,
}
"""File name (without .png) -> the function that draws it."""


def report_folder(course: Path, assignment: str) -> Path:
    """Where `viewcopy report` writes a course's report unless told (`--out`)."""
    return Path(course) / "reports" / assignment


def write_report(report: ClassReport, out: Path) -> list[Path]:
    """`report.csv` (section,key,measure,value: every number), one PNG per figure and per graded
    part's distribution (`distribution_<n>_<part>.png`), and `report.html`, each published whole
    (files.atomic)."""
    out = Path(out)
    written = [write_atomically(out / "report.csv", _csv(report))]
    for name, draw in FIGURES.items():
        written.append(write_atomically(out / f"{name}.png", _png(draw(report))))
    drawn = [(part, _png(distribution(part))) for part in report.distributions]
    for index, (part, data) in enumerate(drawn, start=1):
        slug = re.sub(r"[^a-z0-9]+", "_", part.part.lower()).strip("_")
        written.append(write_atomically(out / f"distribution_{index}_{slug}.png", data))
    written.append(write_atomically(out / "report.html", report_page(report, drawn)))
    return written


def _csv(report: ClassReport) -> str:
    """Every number of the report as CSV text: section,key,measure,value."""
    text = StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["section", "key", "measure", "value"])
    writer.writerows(("" if v is None else v for v in row) for row in rows(report))
    return text.getvalue()
