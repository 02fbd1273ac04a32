"""The hostile corpus, graded by `viewcopy grade` in one run beside two honest students.

Every attack's hand-in is written, never run here: its code only ever runs in the sandbox. For each
attack the test says what it got and why; the honest students' grades must be exactly what their
profiles earn, and nothing outside a submission's own copy may change.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import nbformat
import pytest
from conftest import expected_scores, sandbox_or_skip
from course_notebook import ROOT

from viewcopy.course.assignment import (
    ASSIGNMENT,
    COURSE_ID,
    NOTEBOOK,
    build_course,
    grade_id,
    read_grades,
    submission_folder,
)
from viewcopy.exercise.locking import LOCK_FILE
from viewcopy.instructor.grade import FAILED, GRADED, grade
from viewcopy.instructor.synthetic import Student, hand_in, synthetic_class

sandbox_or_skip(cgroups=True)  # the fork bomb must meet a process limit
LIMIT_S = 45
CHECK_CELLS = ("score_predictions", "check_rules_after", "test_classify_visible")


def attacks(course: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """student_id -> (what it does, the cells it replaces in an otherwise perfect hand-in)."""
    gradebook, source = course / "gradebook.db", course / "source" / ASSIGNMENT / NOTEBOOK
    return {
        "endless_loop": ("loops forever", {"classify": "while True:\n    pass\n"}),
        "fork_bomb": (
            "forks without end",
            {
                "rules_after": "import os\nRULES_AFTER = {}\nwhile True:\n    try:\n"
                "        os.fork()\n    except OSError:\n        pass\n"
            },
        ),  # fmt: skip
        "huge_allocation": (
            "allocates 100 GB",
            {
                "rules_after": "import torch\nRULES_AFTER = {}\n"
                "BIG = torch.ones(100 * 2**30, dtype=torch.uint8)\n"
            },
        ),  # fmt: skip
        "exits_kernel": ("calls os._exit", {"classify": "import os\nos._exit(0)\n"}),
        "crashes_kernel": ("segfaults", {"classify": "import ctypes\nctypes.string_at(0)\n"}),
        "reads_source": (
            "reads the master notebook with the hidden tests",
            {"rules_after": f"RULES_AFTER = {{}}\n{_attempt(f'open({str(source)!r}).read()')}"},
        ),
        "writes_gradebook": (
            "rewrites every grade in gradebook.db",
            {
                "rules_after": "import sqlite3\nRULES_AFTER = {}\n"
                + _attempt(
                    f"sqlite3.connect({str(gradebook)!r})"
                    ".execute('update grade set auto_score = 99').connection.commit()"
                )
            },
        ),
        "deletes_around": (
            "deletes the course around it and its own files",
            {
                "rules_after": "import os, shutil\nRULES_AFTER = {}\n"
                + _attempt(f"shutil.rmtree({str(course)!r})")
                + _attempt("os.remove('view_or_copy.ipynb')")
                + _attempt("shutil.rmtree('../../..')")
            },
        ),
        "patches_torch": (
            "patches torch and viewcopy so that classify scores full marks",
            {
                "classify": "import torch, viewcopy.checks, viewcopy.engine.storage\n"
                "torch.Tensor.untyped_storage = lambda self: None\n"
                "viewcopy.engine.storage.verdict = lambda result, parent: 'view'\n"
                "viewcopy.checks.classify_credit = lambda *args, **kwargs: 5.0\n"
                "def classify(op_result, parent):\n    return 'view'\n"
            },
        ),
        "silences_display": (
            "silences the display so that nbgrader sees no score (and would give full marks)",
            {
                "answer_21": "ANSWER_21 = 'storage'\n"
                "get_ipython().displayhook.write_format_data = lambda *args, **kwargs: None\n"
            },
        ),
        "floods_output": (
            "prints 50 MB",
            {"rules_after": "RULES_AFTER = {}\nprint('x' * 50_000_000)\n"},
        ),
        "forged_lock": ("hands in a lock file written by hand", {}),
    }


def _attempt(statement: str) -> str:
    """Student code that tries `statement` and prints what happened."""
    return (
        f"try:\n    {statement}\n    print('ATTACK SUCCEEDED')\n"
        "except Exception as exc:\n    print('blocked:', type(exc).__name__)\n"
    )


def digest(root: Path, skip: tuple[str, ...]) -> dict[str, str]:
    """sha256 of every file under root, except under the folders named in `skip`."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in skip
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = tmp_path_factory.mktemp("hostile") / "course"
    base = {s.student_id: s for s in synthetic_class(ROOT)}
    honest = [
        Student("honest_perfect", "honest", base["perfect"].cells, classifier="storage"),
        Student(
            "honest_typical",
            "honest",
            base["typical"].cells,
            wrong_items=base["typical"].wrong_items,
            classifier="storage_pointer",
        ),
    ]
    hostile = [
        Student(sid, what, {**base["perfect"].cells, **cells}, runs=False)
        for sid, (what, cells) in attacks(course).items()
    ]
    build_course(ROOT, course, {s.student_id: s.profile for s in [*honest, *hostile]})
    for student in [*honest, *hostile]:
        hand_in(student, course)
    forged = submission_folder(course, "forged_lock") / LOCK_FILE
    forged.write_text(json.dumps({"fingerprint": "0" * 64, "locked_at": "2026-11-29 08:00"}))
    before = digest(course, skip=("autograded", "grade_logs", "gradebook.db"))
    outcomes = {o.student_id: o for o in grade(course, ASSIGNMENT, limit_s=LIMIT_S, say=print)}
    after = digest(course, skip=("autograded", "grade_logs", "gradebook.db"))
    return course, honest, outcomes, before, after


def scores(course: Path, student_id: str) -> dict[str, float | None]:
    return {cell: score for cell, (score, _) in read_grades(course)[student_id].items()}


def autograded(course: Path, student_id: str) -> nbformat.NotebookNode:
    return nbformat.read(course / "autograded" / student_id / ASSIGNMENT / NOTEBOOK, as_version=4)


def cell_text(notebook, wanted: str) -> str:
    (cell,) = [c for c in notebook.cells if grade_id(c) == wanted]
    return "".join(
        o.get("text", "") + str(o.get("data", "")) + o.get("evalue", "") for o in cell.outputs
    )


def unrun_perfect() -> dict[str, float | None]:
    """What a perfect hand-in that was never run (so never locked) earns."""
    perfect = {s.student_id: s for s in synthetic_class(ROOT)}["perfect"]
    return expected_scores(Student("x", "", perfect.cells, runs=False, classifier="storage"))


def test_honest_grades_do_not_move(graded):
    course, honest, outcomes, _, _ = graded
    for student in honest:
        assert outcomes[student.student_id].status == GRADED
        assert scores(course, student.student_id) == pytest.approx(expected_scores(student))


def test_hangs_and_kernel_deaths_fail_with_their_reason(graded):
    _, _, outcomes, _, _ = graded
    for student_id in ("endless_loop", "fork_bomb"):
        assert outcomes[student_id].status == FAILED
        assert f"{LIMIT_S} s limit" in outcomes[student_id].reason
    for student_id in ("exits_kernel", "crashes_kernel"):
        assert outcomes[student_id].status == FAILED
        assert "kernel died" in outcomes[student_id].reason


def test_blocked_reads_writes_and_deletes_leave_the_course_untouched(graded):
    course, _, outcomes, before, after = graded
    assert after == before  # submitted/, source/, release/, config: byte for byte
    for student_id in ("reads_source", "writes_gradebook", "deletes_around"):
        assert outcomes[student_id].status == GRADED
        text = cell_text(autograded(course, student_id), "rules_after")
        assert "blocked:" in text and "ATTACK SUCCEEDED" not in text, student_id
        assert scores(course, student_id) == pytest.approx(unrun_perfect()), student_id
    assert "blocked: FileNotFoundError" in cell_text(
        autograded(course, "reads_source"), "rules_after"
    )


def test_a_huge_allocation_fails_its_cell_only(graded):
    course, _, outcomes, _, _ = graded
    assert outcomes["huge_allocation"].status == GRADED
    assert "memory" in cell_text(autograded(course, "huge_allocation"), "rules_after").lower()
    assert scores(course, "huge_allocation") == pytest.approx(unrun_perfect())


def test_patched_torch_and_helpers_and_a_silenced_display_earn_nothing_for_what_they_patch(graded):
    course, _, _, _, _ = graded
    patched = scores(course, "patches_torch")
    assert patched["test_classify_visible"] == patched["test_classify_hidden"] == 0
    assert "no record" in cell_text(autograded(course, "patches_torch"), "test_classify_visible")
    expected = unrun_perfect()
    silenced = scores(course, "silences_display")
    for cell in ("specific_22", "specific_25", "test_classify_visible", "test_classify_hidden"):
        assert silenced[cell] == 0, cell
    assert silenced["check_rules_after"] == expected["check_rules_after"]


def test_a_50_mb_output_is_cut_and_graded(graded):
    course, _, outcomes, _, _ = graded
    assert outcomes["floods_output"].status == GRADED
    path = course / "autograded" / "floods_output" / ASSIGNMENT / NOTEBOOK
    assert path.stat().st_size < 5 * 2**20
    assert "cut by the grader" in cell_text(autograded(course, "floods_output"), "rules_after")
    assert scores(course, "floods_output") == pytest.approx(unrun_perfect())


def test_a_hand_written_lock_earns_no_prediction_credit(graded):
    course, _, outcomes, _, _ = graded
    assert outcomes["forged_lock"].status == GRADED
    assert scores(course, "forged_lock")["score_predictions"] == 0
    text = cell_text(autograded(course, "forged_lock"), "score_predictions")
    assert "is not a lock this lab wrote" in text


def test_one_result_per_student_and_notebook(graded):
    from nbgrader.api import Gradebook

    course, honest, outcomes, _, _ = graded
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        assert sorted(s.id for s in gradebook.students) == sorted(outcomes)
        for student_id in outcomes:
            submissions = [
                s
                for s in gradebook.assignment_submissions(ASSIGNMENT)
                if s.student_id == student_id
            ]
            assert len(submissions) == 1 and len(submissions[0].notebooks) == 1, student_id
