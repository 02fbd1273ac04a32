"""Hand-graded answers as formgrader shows them: long lines folded without changing what the
cell means (Python's own parser is the judge), and the specificity cell's echo wrapped."""

from __future__ import annotations

import ast

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st
from support.course_notebook import RELEASE, ROOT

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, grade_id
from viewcopy.exercise import catalogue
from viewcopy.notebook import checks
from viewcopy.notebook.specificity import ECHO_WIDTH
from viewcopy.plugins.answer_lines import WIDTH, WrapAnswerLines, wrapped_source

WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\\\"'"),
    min_size=1,
    max_size=20,
).filter(lambda w: not w.isspace() and " " not in w)
ESCAPES = st.sampled_from(["\\n", "\\t", "\\\\", "\\x41", "\\u00e9", "\\N{BULLET}", "\\'", '\\"'])
TEXT = st.lists(st.one_of(WORD, ESCAPES), min_size=1, max_size=60).map(" ".join)
QUOTES = st.sampled_from(['"', "'", '"""', "'''"])


def meaning(source: str) -> str:
    return ast.dump(ast.parse(source))


@settings(max_examples=300, deadline=None)
@given(TEXT, QUOTES, st.sampled_from(["", "u"]), st.sampled_from(["", "    "]))
def test_folding_keeps_every_value_and_leaves_no_long_line(text, quote, prefix, indent):
    head = "if True:\n" if indent else ""
    source = f"{head}{indent}ANSWER_21 = {prefix}{quote}{text}{quote}  # said\n"
    folded = wrapped_source(source)
    assert meaning(folded) == meaning(source)
    assert max(map(len, folded.splitlines())) <= max(WIDTH, max(map(len, text.split(" "))) + 30)


def test_raw_strings_f_strings_short_cells_and_broken_code_are_left_as_they_are():
    raw = "ANSWER_21 = r'" + "a\\ b " * 40 + "'\n"
    fstring = "ANSWER_21 = f'" + "{1} word " * 30 + "'\n"
    short = 'ANSWER_21 = """\nstrides (1, 6)\n"""\n'
    broken = "ANSWER_21 = '" + "word " * 40 + "\n"
    for source in (raw, fstring, short, broken):
        assert wrapped_source(source) == source


def test_long_comments_are_wrapped_and_the_answer_folded():
    source = "# " + "note " * 40 + "\nANSWER_22 = '" + "copies 96 bytes " * 12 + "'\n"
    folded = wrapped_source(source)
    assert meaning(folded) == meaning(source) and folded != source
    assert all(len(line) <= WIDTH for line in folded.splitlines())
    assert [line for line in folded.splitlines() if line.startswith("#")][1].startswith("# note")


def cell(source: str, **nbgrader) -> nbformat.NotebookNode:
    made = nbformat.v4.new_code_cell(source)
    made.metadata["nbgrader"] = {"grade_id": "x", **nbgrader}
    return made


def test_the_preprocessor_folds_hand_graded_answers_only():
    long = "ANSWER_21 = '" + "strides and storage " * 10 + "'\n"
    notebook = nbformat.v4.new_notebook(
        cells=[
            cell(long, grade=True, solution=True, points=2),
            cell(long, grade=False, solution=True),
            cell(long, grade=True, solution=False, points=1),
        ]
    )
    done, _ = WrapAnswerLines().preprocess(notebook, {})
    assert [c.source == long for c in done.cells] == [False, True, True]
    assert meaning(done.cells[0].source) == meaning(long)


def test_the_specificity_cell_echoes_the_answer_wrapped_word_for_word(capsys):
    answer = "The strides " + "x" * 130 + " are (1, 6), so " + "it copies 96 bytes " * 12
    checks.specificity_credit(answer, item=22, points=1)
    out = capsys.readouterr().out
    assert all(len(line) <= ECHO_WIDTH for line in out.splitlines())
    echoed = out.split("\n\n")[0].removeprefix("ANSWER_22:\n")
    assert "".join(echoed.split()) == "".join(answer.split())


def test_the_release_gives_a_triple_quoted_answer_and_the_master_wrapped_rubrics():
    release = {grade_id(c): c.source for c in nbformat.read(RELEASE, 4).cells}
    master = {
        grade_id(c): c.source
        for c in nbformat.read(ROOT / "source" / ASSIGNMENT / NOTEBOOK, 4).cells
    }
    for q in catalogue.QUESTIONS:
        assert release[f"answer_{q.item}"].startswith(f'ANSWER_{q.item} = """\n"""')
        rubric = master[f"specific_{q.item}"]
        assert f"Rubric for the 2 points of answer_{q.item}" in rubric
        assert all(len(line) <= WIDTH for line in rubric.splitlines())
        assert all(len(line) <= WIDTH for line in master[f"answer_{q.item}"].splitlines())
