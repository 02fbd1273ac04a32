"""Hand-ins that look alike: every pair's classify code and written rules compared by copydetect's
winnowed fingerprints, the release's own text of those cells subtracted, listed for the
instructor to look at (never a verdict: two honest students may write the same short thing).

Each hand-in's classify cell is tokenized as copydetect tokenizes Python (`filter_code`: names
become V, strings S, layout and comments go), so renamed variables match; its RULES_AFTER cell is
compared as text without case or whitespace. Fingerprints are copydetect's k-grams
(`get_document_fingerprints`), less those of the release notebook's cells (the starter code, as
CopyDetector subtracts its boilerplate) and those found in more than COMMON hand-ins (the class's
common stock, as MOSS ignores passages shared by many: a model answer from the lecture, a phrase
half the class uses). An inverted index from fingerprint to hand-ins gives the pairs that share
any, and only those are scored, each by copydetect's own overlap (`find_fingerprint_overlap`,
`get_copied_slices`). Nothing a student wrote is run.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path

import numpy as np
from copydetect.utils import (
    filter_code,
    find_fingerprint_overlap,
    get_copied_slices,
    get_document_fingerprints,
    get_token_coverage,
)

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, RULES_AFTER_CELL, grade_id
from viewcopy.course.folder import Course

CLASSIFY_CELL = "classify"
"""The grade id of the cell where a student writes classify."""
PARTS = (CLASSIFY_CELL, RULES_AFTER_CELL)
"""The cells compared, in the order a passage lists them."""
K = 25
"""The shortest run of tokens (classify) or characters (rules) that counts as a match:
copydetect's noise threshold, its default."""
WINDOW = 1
"""copydetect's winnowing window (its guarantee threshold less the noise threshold, plus one):
1 keeps every k-gram, copydetect's default."""
THRESHOLD = 0.7
"""A pair is listed when at least this share of what the two wrote beyond the starter code lies
in passages they share (`score_pair`). Chosen between what the tests measure on either side:
a classify with every name changed and its functions reordered keeps 0.85-1 of it (the
synthetic `renamed` and `fifteen` 1.0); two classify written each their own way share next to
nothing, and the synthetic class's honest students who repeat the rule template's sentences
word for word for the items they both missed (`rule_learner` and `typical`: two sentences)
reach 0.5-0.56, held down by their different classify (tests/course/test_similarity.py)."""
COMMON = 5
"""A fingerprint found in more than this many hand-ins is common stock, not a pair's: it is
neither indexed nor matched, though it still counts as what each wrote (as MOSS's -m ignores a
passage found in many programs). Five: the master's model classify that six of the synthetic
class's twelve hand in is common, a passage shared by a handful is not; it also bounds the pairs
one fingerprint makes to ten, which keeps a large class's comparisons few."""


@dataclass(frozen=True)
class HandInText:
    """What one hand-in wrote in the compared cells (by grade id), read without running it."""

    student: str
    cells: Mapping[str, str]


@dataclass(frozen=True)
class Passage:
    """A matching passage: the cell, then its text in the first hand-in and in the second
    (whole lines)."""

    cell: str
    first: str
    second: str


@dataclass(frozen=True)
class SimilarPair:
    """Two hand-ins to look at: the share of what one wrote that the other also holds (the
    larger of the two ways) and the passages they share."""

    first: str
    second: str
    score: float
    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class Document:
    """One cell of one hand-in as copydetect compares it: the raw text, the filtered one, how a
    filtered position maps back (`origin`), and its fingerprints by hash."""

    raw: str
    filtered: str
    origin: np.ndarray
    hashes: frozenset
    where: Mapping[int, list[int]]
    covered: int
    """The tokens its fingerprints cover, the starter's subtracted, the common stock's not: what
    the hand-in wrote of its own in this cell."""


def filtered(cell: str, text: str) -> tuple[str, np.ndarray]:
    """The text copydetect fingerprints and, per filtered position, where it starts in `text`:
    classify tokenized as Python, rules lowercased without whitespace."""
    if cell == CLASSIFY_CELL:
        out, offsets = filter_code(text, "classify.py", language="python")
        positions = np.arange(len(out))
        if len(offsets):
            at = np.clip(np.searchsorted(offsets[:, 0], positions), 0, len(offsets) - 1)
            positions = positions + offsets[:, 1][at]
        return out, positions
    kept = [(i, c.lower()) for i, c in enumerate(text) if not c.isspace()]
    return "".join(c for _, c in kept), np.array([i for i, _ in kept], dtype=int)


def fingerprints(cell: str, text: str, boilerplate: Iterable[int] = ()) -> Document:
    """The cell's fingerprints, less `boilerplate` hashes (copydetect's own subtraction)."""
    out, origin = filtered(cell, text)
    drop = np.array(sorted(set(boilerplate)), dtype=np.int64)
    hashes, where = get_document_fingerprints(out, K, WINDOW, drop if len(drop) else None)
    covered = int(get_token_coverage(where, K, len(out)))
    return Document(text, out, origin, frozenset(int(h) for h in hashes), _plain(where), covered)


def _plain(where: Mapping) -> dict[int, list[int]]:
    return {int(h): idx for h, idx in where.items()}


def compare(
    texts: Iterable[HandInText], starter: Mapping[str, str], threshold: float = THRESHOLD
) -> tuple[SimilarPair, ...]:
    """The pairs of `texts` at or above `threshold`, highest first; `starter`: the release's
    text of each compared cell (subtracted)."""
    bases = {cell: fingerprints(cell, starter.get(cell, "")).hashes for cell in PARTS}
    known: dict[tuple[str, str], Document] = {}  # a text many hand in is fingerprinted once

    def document(cell: str, text: str) -> Document:
        if (cell, text) not in known:
            known[cell, text] = fingerprints(cell, text, bases[cell])
        return known[cell, text]

    first = {t.student: {c: document(c, t.cells.get(c, "")) for c in PARTS} for t in texts}
    common = {cell: _common(docs[cell] for docs in first.values()) for cell in PARTS}
    documents = {
        student: {c: _without(docs[c], common[c]) if common[c] else docs[c] for c in PARTS}
        for student, docs in first.items()
    }
    found = (score_pair(a, b, documents[a], documents[b]) for a, b in candidates(documents))
    listed = [pair for pair in found if pair.score >= threshold]
    return tuple(sorted(listed, key=lambda p: (-p.score, p.first, p.second)))


def _common(documents: Iterable[Document]) -> frozenset[int]:
    counts: dict[int, int] = defaultdict(int)
    for document in documents:
        for h in document.hashes:
            counts[h] += 1
    return frozenset(h for h, n in counts.items() if n > COMMON)


def _without(document: Document, common: frozenset[int]) -> Document:
    hashes = document.hashes - common
    where = {h: i for h, i in document.where.items() if h in hashes}
    return replace(document, hashes=hashes, where=where)


def candidates(documents: Mapping[str, Mapping[str, Document]]) -> list[tuple[str, str]]:
    """The pairs that share at least one fingerprint, by an inverted index: fingerprint ->
    hand-ins (a pair sharing none scores 0 and is never compared)."""
    index: dict[tuple[str, int], list[str]] = defaultdict(list)
    for student in sorted(documents):
        for cell, document in documents[student].items():
            for h in document.hashes:
                index[cell, h].append(student)
    pairs = {pair for holders in index.values() for pair in combinations(holders, 2)}
    return sorted(pairs)


def score_pair(
    a: str, b: str, first: Mapping[str, Document], second: Mapping[str, Document]
) -> SimilarPair:
    """The share of what the two wrote of their own (the tokens their fingerprints cover, over
    the compared cells) that lies in passages they share (copydetect's copied slices): both
    hand-ins' copied tokens over both hand-ins' covered ones, so a short hand-in that repeats
    one sentence of a long one scores low, and two that are each other's score 1."""
    copied, covered, passages = [0, 0], [0, 0], []
    for cell in PARTS:
        one, two = first[cell], second[cell]
        covered[0] += one.covered
        covered[1] += two.covered
        idx1, idx2 = find_fingerprint_overlap(one.hashes, two.hashes, one.where, two.where)
        if not len(idx1):
            continue
        for side, idx in enumerate((idx1, idx2)):
            slices = get_copied_slices(idx, K)
            copied[side] += int(np.sum(slices[1] - slices[0]))
        passages.extend(_passages(cell, one, two))
    score = sum(copied) / sum(covered) if sum(covered) else 0.0
    return SimilarPair(a, b, round(min(score, 1.0), 4), tuple(passages))


def _passages(cell: str, one: Document, two: Document) -> Iterator[Passage]:
    """Each copied slice of the first document beside the slices of the second that hold the
    same fingerprints, as whole lines of what each wrote."""
    shared = one.hashes & two.hashes
    starts = np.array(sorted(i for h in shared for i in one.where[h]))
    for start, end in get_copied_slices(starts, K).T:
        inside = [h for h in shared if any(start <= i < end for i in one.where[h])]
        theirs = np.array(sorted(i for h in inside for i in two.where[h]))
        spans = [_lines(two, s, e) for s, e in get_copied_slices(theirs, K).T]
        yield Passage(cell, _lines(one, start, end), "\n…\n".join(spans))


def _lines(document: Document, start: int, end: int) -> str:
    """The whole lines of the raw text that a filtered slice [start, end) covers."""
    raw, origin = document.raw, document.origin
    begin = int(origin[min(start, len(origin) - 1)])
    stop = int(origin[min(end, len(origin)) - 1]) + 1
    begin = raw.rfind("\n", 0, begin) + 1
    after = raw.find("\n", stop)
    return raw[begin : len(raw) if after < 0 else after].strip("\n")


def cell_texts(notebook: Mapping, student: str) -> HandInText:
    """The compared cells' text in a notebook's JSON (the last cell of each grade id; "" where
    there is none)."""
    cells = dict.fromkeys(PARTS, "")
    for cell in notebook.get("cells", ()):
        if isinstance(cell, Mapping) and grade_id(cell) in cells:
            source = cell.get("source", "")
            cells[grade_id(cell)] = "".join(source) if isinstance(source, list) else str(source)
    return HandInText(student, cells)


def read_notebook(path: Path) -> Mapping:
    """A notebook's JSON as it is: only cell sources are read, so no validation is paid for."""
    with open(path, encoding="utf-8") as file:
        notebook = json.load(file)
    if not isinstance(notebook, Mapping):
        raise ValueError(f"{path} is not a notebook")
    return notebook


def read_texts(course: Course, assignment: str = ASSIGNMENT) -> tuple[dict, list[HandInText]]:
    """The release's text of the compared cells and each hand-in's in `submitted/` (a hand-in
    that is no notebook is left out: the report names it elsewhere)."""
    release = course.released(assignment)
    if not release.is_file():
        raise FileNotFoundError(f"no {release}: its starter code is what hand-ins share by design")
    starter = cell_texts(read_notebook(release), "").cells
    texts = []
    for folder in sorted(course.submitted.glob(f"*/{assignment}")):
        try:
            notebook = read_notebook(folder / NOTEBOOK)
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        texts.append(cell_texts(notebook, folder.parent.name))
    return starter, texts


def similar_pairs(course: Course, assignment: str = ASSIGNMENT) -> tuple[SimilarPair, ...]:
    """The pairs of hand-ins in the course's `submitted/` to look at, highest score first."""
    starter, texts = read_texts(course, assignment)
    return compare(texts, starter)


TITLE = "Hand-ins that look alike"
INTRODUCTION = (
    "Pairs of hand-ins where at least {share:.0%} of what the two wrote in classify and in "
    "their rules after, beyond the starter code, lies in passages they share (variable names "
    "and layout ignored; a passage more than {common} hand-ins hold is nobody's pair). Look at "
    "these side by side before drawing any conclusion: two students may have worked from the "
    "same notes or written the same short thing."
)
CELL_NAMES = {CLASSIFY_CELL: "classify", RULES_AFTER_CELL: "rules after"}


def similarity_section(pairs: Iterable[SimilarPair], threshold: float = THRESHOLD) -> str:
    """The pairs as an HTML section: each pair's score and its matching passages side by side in
    a two-column table, one column per hand-in; everything a student wrote escaped."""
    pairs = list(pairs)
    out = [
        '<section id="similarity">',
        f"<h2>{TITLE}</h2>",
        f"<p>{html.escape(INTRODUCTION.format(share=threshold, common=COMMON))}</p>",
    ]
    if not pairs:
        out.append("<p>No pair to look at.</p>")
    out.extend(_pair_table(pair) for pair in pairs)
    out.append("</section>")
    return "\n".join(out)


def _pair_table(pair: SimilarPair) -> str:
    first, second = html.escape(pair.first), html.escape(pair.second)
    out = [
        f'<table class="similarity"><caption>{first} and {second}: {pair.score:.0%} '
        "of what they wrote in shared passages</caption>",
        f'<thead><tr><th scope="col">{first}</th><th scope="col">{second}</th></tr></thead>',
    ]
    cell = None
    for p in pair.passages:
        if p.cell != cell:
            out.extend(["</tbody>"] if cell else [])
            cell = p.cell
            name = html.escape(CELL_NAMES.get(cell, cell))
            out.append(f'<tbody><tr><th colspan="2" scope="colgroup">{name}</th></tr>')
        out.append(
            f"<tr><td><pre>{html.escape(p.first)}</pre></td>"
            f"<td><pre>{html.escape(p.second)}</pre></td></tr>"
        )
    out.append("</tbody></table>" if cell else "</table>")
    return "\n".join(out)


def similarity_rows(pairs: Iterable[SimilarPair]) -> Iterator[tuple[str, str, str, object]]:
    """The pairs as report.csv's rows (section `similarity`, key `first/second`): the score and
    the number of matching passages."""
    for pair in pairs:
        key = f"{pair.first}/{pair.second}"
        yield "similarity", key, "score", pair.score
        yield "similarity", key, "passages", len(pair.passages)
