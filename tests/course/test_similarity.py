"""Hand-ins that look alike (viewcopy.report.similarity): the unit tests compare classify cells
and rules written here by hand; the brute-force check runs copydetect's own CopyDetector over
files, every pair, as an instructor would run copydetect by hand; the course test reads the
session's graded class (conftest's `cycle`), in which `renamed` hands in `fifteen`'s work under
other names.
"""

from __future__ import annotations

import shutil
from itertools import combinations
from pathlib import Path

import nbformat
import pytest
from copydetect import CopyDetector
from support.course_notebook import ROOT

from viewcopy.course.assignment import NOTEBOOK, RULES_AFTER_CELL, grade_id
from viewcopy.course.folder import Course
from viewcopy.demo.synthetic import FIFTEEN_WRONG, rules_after, synthetic_class
from viewcopy.report.similarity import (
    CLASSIFY_CELL,
    COMMON,
    THRESHOLD,
    HandInText,
    K,
    compare,
    read_texts,
    similar_pairs,
    similarity_rows,
    similarity_section,
)

STARTER = {
    CLASSIFY_CELL: 'def classify(op_result, parent):\n    """Return \'view\' if op_result lives in '
    "parent's memory, else 'copy'.\"\"\"\n    # YOUR CODE HERE\n",
    RULES_AFTER_CELL: 'RULES_AFTER = {\n    # item: "the rule that would have saved it",\n}\n'
    "# YOUR CODE HERE\n",
}

BY_STORAGE = '''def storage_of(tensor):
    """The storage a tensor's elements live in."""
    return tensor.untyped_storage()


def span(storage):
    """The first and one-past-last byte address of a storage."""
    start = storage.data_ptr()
    return start, start + storage.nbytes()


def classify(op_result, parent):
    """Return 'view' if op_result lives in parent's memory, else 'copy'."""
    mine, theirs = storage_of(op_result), storage_of(parent)
    if mine is theirs:
        return "view"
    low, high = span(mine)
    other_low, other_high = span(theirs)
    overlap = low < other_high and other_low < high
    return "view" if overlap else "copy"
'''

RENAMED = '''def classify(result, source):
    """Return 'view' if result lives in source's memory, else 'copy'."""
    a, b = memory(result), memory(source)
    if a is b:
        return "view"
    first, last = bounds(a)
    first_other, last_other = bounds(b)
    shared = first < last_other and first_other < last
    return "view" if shared else "copy"


def bounds(block):
    """The first and one-past-last byte address of a storage."""
    begin = block.data_ptr()
    return begin, begin + block.nbytes()


def memory(t):
    """The storage a tensor's elements live in."""
    return t.untyped_storage()
'''
"""BY_STORAGE with every name changed and its functions in the opposite order."""

BY_NUMPY = '''import numpy as np


def classify(op_result, parent):
    """Return 'view' if op_result lives in parent's memory, else 'copy'."""
    if op_result is parent:
        return "view"
    try:
        shared = np.shares_memory(op_result.detach().cpu().numpy(), parent.detach().numpy())
    except (TypeError, RuntimeError):
        shared = False
    return "view" if shared else "copy"
'''
"""Another student's classify: the same question asked of NumPy, written their own way."""

BY_BASE = '''def classify(op_result, parent):
    """Return 'view' if op_result lives in parent's memory, else 'copy'."""
    # walk up the chain of bases until there is none left
    node = op_result
    while node._base is not None:
        node = node._base
    for candidate in (node, op_result):
        if candidate is parent or candidate is getattr(parent, "_base", None):
            return "view"
    return "copy"
'''

RULES = (
    "RULES_AFTER = {\n"
    "    8: 'a transpose keeps the storage and swaps the strides, so it is a view',\n"
    "    14: 'reshape copies only when the strides cannot express the new shape',\n"
    "}\n"
)
OTHER_RULES = (
    "RULES_AFTER = {\n"
    "    8: '.t() just relabels the dimensions: no new memory',\n"
    "    14: 'after a transpose the rows are not contiguous any more, reshape has to copy',\n"
    "}\n"
)

DEE_RULES = (
    "RULES_AFTER = {\n"
    "    9: 'indexing with a list gathers the elements into new memory',\n"
    "    15: 'flatten of a non-contiguous tensor cannot keep one stride per dimension',\n"
    "}\n"
)


def text(student: str, classify: str, rules: str = STARTER[RULES_AFTER_CELL]) -> HandInText:
    return HandInText(student, {CLASSIFY_CELL: classify, RULES_AFTER_CELL: rules})


def pair_of(pairs, first: str, second: str):
    return next((p for p in pairs if {p.first, p.second} == {first, second}), None)


def test_renamed_variables_and_reordered_functions_score_above_the_threshold():
    pairs = compare(
        [text("ada", BY_STORAGE, RULES), text("bob", RENAMED, RULES)], STARTER, threshold=0
    )
    (pair,) = pairs
    assert pair.score >= 0.9 > THRESHOLD, pair.score
    cells = {p.cell for p in pair.passages}
    assert cells == {CLASSIFY_CELL, RULES_AFTER_CELL}
    assert any("def span(storage)" in p.first and "def bounds(block)" in p.second
               for p in pair.passages)  # fmt: skip


def test_independent_solutions_written_differently_score_below_the_threshold():
    texts = [text("ada", BY_STORAGE, RULES), text("cy", BY_NUMPY, OTHER_RULES)]
    texts.append(text("dee", BY_BASE, DEE_RULES))
    scored = compare(texts, STARTER, threshold=0)
    assert all(p.score < 0.2 for p in scored), scored
    assert compare(texts, STARTER) == ()


def test_the_starter_code_alone_scores_nothing_however_many_hand_it_in():
    texts = [text(s, STARTER[CLASSIFY_CELL], STARTER[RULES_AFTER_CELL]) for s in "abc"]
    assert compare(texts, STARTER, threshold=0) == ()
    # without subtracting it, the rules cell's starter text alone is a match
    unsubtracted = compare(texts, {}, threshold=0)
    assert unsubtracted and all(p.score == 1 for p in unsubtracted)


def test_the_starter_code_around_a_solution_is_not_a_passage():
    ada, bob = text("ada", STARTER[CLASSIFY_CELL] + BY_NUMPY), text("bob", BY_STORAGE)
    assert compare([ada, bob], STARTER, threshold=0) == ()


def test_common_stock_is_no_pair_s_but_a_pair_beside_it_is_found():
    """The model answer handed in by more than COMMON students (the synthetic class's `storage`
    students) is nobody's pair; two who wrote the same thing beside it are."""
    texts = [text(f"model{i}", BY_STORAGE) for i in range(COMMON + 1)]
    texts += [text("ada", BY_NUMPY, RULES), text("bob", BY_NUMPY, RULES)]
    pairs = compare(texts, STARTER)
    assert [(p.first, p.second) for p in pairs] == [("ada", "bob")]
    few = compare(texts[:COMMON], STARTER)
    assert len(few) == COMMON * (COMMON - 1) // 2  # as many as COMMON: each pair is listed


def test_what_a_student_wrote_is_escaped_in_the_section_and_the_csv_rows_name_the_pair():
    script = "<script>alert('hi')</script>"
    hostile = BY_STORAGE.replace('"view"', f'"{script}"')
    pairs = compare(
        [text("<b>ada</b>", hostile), text("bob", hostile.replace("tensor", "t"))], STARTER
    )
    page = similarity_section(pairs)
    assert "<script>" not in page and "<b>ada</b>" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;ada&lt;/b&gt;" in page
    assert page.count("<td><pre>") == 2 * len(pairs[0].passages) > 0
    assert page.count('<th scope="col">') == 2  # side by side: one column per hand-in
    assert page.count("<tbody>") == page.count("</tbody>") == 1  # the classify cell's passages
    words = page.lower()
    assert "look at these" in words
    assert "copied" not in words and "plagiar" not in words
    rows = list(similarity_rows(pairs))
    assert rows == [
        ("similarity", "<b>ada</b>/bob", "score", pairs[0].score),
        ("similarity", "<b>ada</b>/bob", "passages", len(pairs[0].passages)),
    ]
    assert "No pair" in similarity_section(())


def copydetect_all_pairs(texts: list[HandInText], folder: Path) -> dict[frozenset, float]:
    """Every pair's score by copydetect's CopyDetector over files, brute force: each hand-in's
    classify as a .py file, the starter as boilerplate; the pair's score from the detector's own
    similarities and token coverages (the share of both hand-ins' tokens in copied slices)."""
    (folder / "starter").mkdir(parents=True)
    (folder / "starter" / "classify.py").write_text(STARTER[CLASSIFY_CELL])
    for t in texts:
        (folder / "handins" / t.student).mkdir(parents=True)
        (folder / "handins" / t.student / "classify.py").write_text(t.cells[CLASSIFY_CELL])
    detector = CopyDetector(
        test_dirs=[folder / "handins"], boilerplate_dirs=[folder / "starter"],
        extensions=["py"], noise_t=K, guarantee_t=K, display_t=0, silent=True, autoopen=False,
    )  # fmt: skip
    detector.run()
    files = [str(folder / "handins" / t.student / "classify.py") for t in texts]
    at = {f: detector.test_files.index(f) for f in files}
    scores = {}
    for one, two in combinations(files, 2):
        sim1, sim2 = detector.similarity_matrix[at[one], at[two]]
        cov1, cov2 = (detector.file_data[f].token_coverage for f in (one, two))
        student = (Path(one).parent.name, Path(two).parent.name)
        scores[frozenset(student)] = (sim1 * cov1 + sim2 * cov2) / (cov1 + cov2)
    return scores


def test_the_index_finds_the_pairs_copydetect_finds_comparing_every_pair(tmp_path):
    sources = {
        "ada": BY_STORAGE, "bob": RENAMED, "cy": BY_NUMPY, "dee": BY_BASE,
        "eve": BY_NUMPY.replace("(TypeError, RuntimeError)", "Exception"),
        "fay": BY_BASE + "\n\nprint(classify)\n", "gus": STARTER[CLASSIFY_CELL],
    }  # fmt: skip
    texts = [text(student, source) for student, source in sources.items()]
    brute = copydetect_all_pairs(texts, tmp_path)
    found = {frozenset((p.first, p.second)): p.score for p in compare(texts, STARTER, 0)}
    assert set(found) == {pair for pair, score in brute.items() if score > 0}
    assert found == pytest.approx({pair: brute[pair] for pair in found}, abs=1e-3)
    listed = {frozenset((p.first, p.second)) for p in compare(texts, STARTER)}
    assert listed == {pair for pair, score in brute.items() if score >= THRESHOLD}
    assert listed >= {frozenset(("ada", "bob")), frozenset(("cy", "eve"))}


def test_a_course_s_hand_ins_are_read_from_submitted_and_the_release(tmp_path):
    release = ROOT / "release"
    shutil.copytree(release, tmp_path / "release")
    notebook = nbformat.read(release / "view_or_copy" / NOTEBOOK, as_version=4)
    for student, source in (("ada", BY_STORAGE), ("bob", RENAMED)):
        for cell in notebook.cells:
            if grade_id(cell) == CLASSIFY_CELL:
                cell.source = source
        folder = tmp_path / "submitted" / student / "view_or_copy"
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / NOTEBOOK)
    (tmp_path / "submitted" / "cy" / "view_or_copy").mkdir(parents=True)  # no notebook
    course = Course.at(tmp_path)
    starter, texts = read_texts(course)
    assert starter[CLASSIFY_CELL].startswith("def classify(op_result, parent):")
    assert [t.student for t in texts] == ["ada", "bob"]
    (pair,) = similar_pairs(course)
    assert (pair.first, pair.second) == ("ada", "bob") and pair.score >= THRESHOLD
    shutil.rmtree(tmp_path / "release")
    with pytest.raises(FileNotFoundError, match="starter code"):
        similar_pairs(course)


def test_the_synthetic_rules_share_template_sentences_that_stay_below_the_threshold():
    """The synthetic class's rules come from one template (demo.synthetic.rules_after): students
    who missed the same items wrote the same sentences. `rule_learner` and `typical` share two of
    them word for word, yet what else each wrote (its classify) keeps the pair below."""
    rule_learner = text("rule_learner", BY_STORAGE, rules_after((8, 14, 16)))
    typical = text("typical", BY_NUMPY, rules_after((8, 14)))
    (pair,) = compare([rule_learner, typical], STARTER, threshold=0)
    assert 0.2 < pair.score < THRESHOLD
    fifteen = rules_after(FIFTEEN_WRONG)
    copy = compare([text("a", BY_BASE, fifteen), text("b", BY_BASE, fifteen)], STARTER)
    assert [p.score for p in copy] == [1.0]


def handed_in_cells(course: Path) -> dict[tuple[str, str], set[str]]:
    """The hand-ins of the course by what they hold in the compared cells, text for text."""
    groups: dict[tuple[str, str], set[str]] = {}
    for folder in (course / "submitted").glob("*/view_or_copy"):
        notebook = nbformat.read(folder / NOTEBOOK, as_version=4)
        cells = {grade_id(c): c.source for c in notebook.cells}
        held = (cells.get(CLASSIFY_CELL, ""), cells.get(RULES_AFTER_CELL, ""))
        groups.setdefault(held, set()).add(folder.parent.name)
    return groups


@pytest.mark.course
def test_on_the_session_s_class_exactly_the_copying_pair_is_listed(cycle):
    """Among the synthetic class, only `fifteen` and `renamed`. The session's class also holds
    test hand-ins that hand in a profile's cells again verbatim (support.the_class's tampered
    ones): each is listed with that profile (and so with `renamed` where it is `fifteen`'s), and
    with nobody else, unless those cells are the common stock of more than COMMON hand-ins (the
    master's model classify, which most profiles hand in)."""
    course, _ = cycle
    pairs = similar_pairs(Course.at(course))
    listed = {frozenset((p.first, p.second)) for p in pairs}
    synthetic = {s.student_id for s in synthetic_class(ROOT)}
    assert {pair for pair in listed if pair <= synthetic} == {frozenset(("fifteen", "renamed"))}
    starter, _ = read_texts(Course.at(course))
    groups = handed_in_cells(course)
    same = [g for cells, g in groups.items() if cells != tuple(starter.values())]
    expected = {
        frozenset(pair) for g in same if len(g) <= COMMON for pair in combinations(sorted(g), 2)
    }
    fifteen = next(g for g in same if "fifteen" in g)
    expected |= {frozenset(("renamed", s)) for s in fifteen}
    assert expected > {frozenset(("fifteen", "renamed"))}
    assert any(len(g) > COMMON for g in same), "the model classify is common stock"
    assert listed == expected
    for p in pairs:
        assert p.score >= THRESHOLD and p.passages
