"""How long the class report's similarity list (viewcopy.report.similarity) takes for a large
class: a course folder of generated hand-ins, each a synthetic profile's classify with lines of
its own and rules of its own, some pairs handed in twice under other names.

Target: a few seconds for 1,000 hand-ins on two cores (the whole report: at most 60 s). Prints
the time to read and compare them, the pairs listed, how many of the planted pairs are among
them and how many others, and the planted pairs' scores.

Run: .venv/bin/python benchmarks/bench_similarity.py [--handins N] [--planted N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import tempfile
import time
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, RULES_AFTER_CELL
from viewcopy.course.folder import Course
from viewcopy.demo.classifiers import CLASSIFIERS, RENAMED_BASE, classify_source
from viewcopy.report.similarity import (
    CLASSIFY_CELL,
    COMMON,
    THRESHOLD,
    compare,
    read_texts,
    similar_pairs,
)

ROOT = Path(__file__).parents[1]
WORDS = (
    "storage strides offset view copy contiguous transpose reshape slice index gather memory "
    "layout shape dimension element bytes shares new same parent result returns keeps makes "
    "needs whenever because only if not a the every one each row column step size dtype "
    "device flat expand permute narrow select mask list tensor data pointer base"
)


def own_lines(rng: random.Random) -> str:
    """Lines only this student wrote: checks with numbers of their own."""
    lines = []
    for _ in range(rng.randint(3, 6)):
        a, b, c = rng.randint(2, 999), rng.randint(2, 999), rng.randint(0, 99)
        lines.append(f"    if op_result.dim() > {a} and parent.numel() % {b} == {c}:\n")
        lines.append(f"        return {rng.choice(['view', 'copy'])!r}\n")
    return "".join(lines)


def student_classify(rng: random.Random, bases: list[str]) -> str:
    """A profile's classify with the student's own lines after its docstring."""
    base = rng.choice(bases)
    head, _, rest = base.partition('"""\n')
    return head + '"""\n' + own_lines(rng) + rest


def student_rules(rng: random.Random) -> str:
    """RULES_AFTER for a few items, each a sentence of the student's own words."""
    words = WORDS.split()
    items = rng.sample(range(1, 21), rng.randint(1, 5))
    body = "".join(
        f"    {i}: {' '.join(rng.choice(words) for _ in range(rng.randint(6, 12)))!r},\n"
        for i in sorted(items)
    )
    return "RULES_AFTER = {\n" + body + "}\n"


def renamed(source: str) -> str:
    """The same classify under other names, its lines indented the same."""
    names = {"op_result": "res", "parent": "src", "root": "origin", "same": "equal"}
    return re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: names[m.group(1)], source)


def notebook(cells: dict[str, str]) -> dict:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": cell,
                "metadata": {"nbgrader": {"grade_id": cell, "solution": True}},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
            for cell, source in cells.items()
        ],
    }


def write_class(course: Path, handins: int, planted: int, seed: int = 0) -> set[frozenset]:
    """The course folder with its release and `handins` hand-ins; the planted pairs."""
    rng = random.Random(seed)
    shutil.copytree(ROOT / "release" / ASSIGNMENT, course / "release" / ASSIGNMENT)
    bases = [classify_source(kind, ROOT) for kind in ("storage", *CLASSIFIERS)] + [RENAMED_BASE]
    texts = {
        f"s{n:04d}": {CLASSIFY_CELL: student_classify(rng, bases), RULES_AFTER_CELL: ""}
        for n in range(handins - planted)
    }
    for cells in texts.values():
        cells[RULES_AFTER_CELL] = student_rules(rng)
    pairs = set()
    for n, original in enumerate(rng.sample(sorted(texts), planted)):
        again = {cell: renamed(source) for cell, source in texts[original].items()}
        texts[f"t{n:04d}"] = again
        pairs.add(frozenset((original, f"t{n:04d}")))
    for student, cells in texts.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(notebook(cells)))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--handins", type=int, default=1000)
    parser.add_argument("--planted", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="100 hand-ins, 5 planted pairs")
    args = parser.parse_args()
    if args.quick:
        args.handins, args.planted = 100, 5
    with tempfile.TemporaryDirectory() as scratch:
        course = Path(scratch) / "course"
        planted = write_class(course, args.handins, args.planted)
        written = Course.at(course)
        start = time.perf_counter()
        pairs = similar_pairs(written)
        took = time.perf_counter() - start
        starter, texts = read_texts(written)
        every = {frozenset((p.first, p.second)): p.score for p in compare(texts, starter, 0)}
    listed = {frozenset((p.first, p.second)) for p in pairs}
    print(f"{args.handins} hand-ins: similarity in {took:.2f} s, {len(pairs)} pairs listed")
    print(f"planted pairs listed: {len(planted & listed)}/{len(planted)}")
    print(f"other pairs listed: {len(listed - planted)}")
    scores = sorted(every.get(pair, 0.0) for pair in planted)
    print(f"planted pairs' scores (threshold {THRESHOLD}): {', '.join(map(str, scores))}")
    print("(a planted pair below it handed in mostly the common stock: a model answer that more")
    print(f" than {COMMON} hand in, which counts as what each wrote but is no pair's)")


if __name__ == "__main__":
    main()
