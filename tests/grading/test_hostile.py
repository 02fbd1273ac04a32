"""The hostile corpus (tests/support/hostile_corpus.py), graded by `viewcopy grade` in one run
beside two honest students.

For each attack the test says what it got and why; the honest students' grades must be exactly what
their profiles earn, and nothing outside a submission's own copy may change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from support.hostile_corpus import FORGED, LIMIT_S, PLANTED, SECRET
from support.oracles import expected_scores, lock_of
from support.payloads import STUDENT, as_scored, hostile_student, notebook_active_content
from support.sandboxing import sandbox_or_skip
from support.the_class import synthetic_student

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK, grade_id, read_grades
from viewcopy.course.folder import Course
from viewcopy.demo.synthetic import Student
from viewcopy.grading.grade import FAILED, GRADED

pytestmark = [pytest.mark.course, pytest.mark.sandbox]

sandbox_or_skip(cgroups=True)  # the fork bomb must meet a process limit
CHECK_CELLS = ("score_predictions", "check_rules_after", "test_classify_visible")


@pytest.fixture(scope="module")
def graded(hostile):
    return hostile


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
    perfect = synthetic_student("perfect")
    return expected_scores(Student("x", "", perfect.cells, runs=False, classifier="storage"))


def test_honest_grades_do_not_move(graded):
    course, honest, outcomes, _, _ = graded
    for student in honest:
        assert outcomes[student.student_id].status == GRADED
        expected = expected_scores(student, lock_of(course, student.student_id))
        assert scores(course, student.student_id) == pytest.approx(expected)


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


def test_a_hand_in_that_scripts_the_browser_earns_its_grades_and_is_kept_inert(graded):
    course, _, outcomes, _, _ = graded
    perfect = synthetic_student("perfect")
    earned = expected_scores(as_scored(hostile_student(perfect)))
    assert outcomes[STUDENT].status == GRADED
    assert scores(course, STUDENT) == pytest.approx(earned)
    notebook = autograded(course, STUDENT)
    assert notebook_active_content(notebook) == []
    shown = "".join(str(o.get("data", "")) for c in notebook.cells for o in c.get("outputs", []))
    for place in ("html_output", "html_script", "js_output", "svg_output", "markdown_output"):
        assert f"pwned_{place}" not in shown, place  # removed with what carried it
    for table, place in [("lock", "rule"), ("reveal", "rule"), ("lock_next", "next_rule")]:
        text = cell_text(notebook, table)
        assert "&lt;img src=x onerror=" in text and f"pwned_{place}" in text, table  # as text
    assert "application/javascript output removed by the grader" in shown


def test_nothing_a_hand_in_plants_reaches_the_host(graded):
    """A setuid copy of `id` in every folder the kernel could write: it wrote some (its own
    tmpfs), and none of them is on the host."""
    course, _, outcomes, _, _ = graded
    assert outcomes["plants_on_host"].status == GRADED
    text = cell_text(autograded(course, "plants_on_host"), "rules_after")
    planted, _ = json.loads(text)
    assert planted
    for top in ("/tmp", str(course), "/run", "/var/tmp", "/dev/shm", str(Path.home())):
        for folder, _, files in os.walk(top):
            assert PLANTED not in files, f"{folder} holds what a hand-in planted"


def test_no_secret_of_the_graders_reaches_a_hand_in(graded):
    """The grader's environment held a secret while it graded: no process a hand-in could read
    held it, and the sandbox's init refused to be read at all."""
    course, _, outcomes, _, _ = graded
    assert outcomes["reads_grader_secrets"].status == GRADED
    text = cell_text(autograded(course, "reads_grader_secrets"), "rules_after")
    found, refused = json.loads(text)
    assert found == {} and SECRET not in text
    assert "1/environ" in refused and "1/mem" in refused
    logs = Course.at(course).grade_logs(ASSIGNMENT)
    assert not any(SECRET in log.read_text() for log in logs.glob("*.log"))


def test_a_hand_in_cannot_write_the_graders_words_into_its_log(graded):
    """Lines a kernel writes beneath ipykernel's streams reach the worker's log only as the
    kernel's, with their escape sequences escaped."""
    course, _, outcomes, _, _ = graded
    assert outcomes["forges_log"].status == GRADED
    logs = Course.at(course).grade_logs(ASSIGNMENT)
    lines = [
        line
        for log in logs.glob("worker-*.log")
        for line in log.read_text().splitlines()
        if FORGED in line
    ]
    assert sorted(lines) == sorted([f"kernel | \\x1b[2K{FORGED}", f"kernel | {FORGED}"])


def test_a_hand_in_that_signals_everyone_harms_no_one_else(graded):
    """SIGKILL to every pid it sees: the sandbox's init refuses, no other hand-in's grading
    moves (test_honest_grades_do_not_move), and its own is graded."""
    course, _, outcomes, _, _ = graded
    assert outcomes["signals_everyone"].status == GRADED
    text = cell_text(autograded(course, "signals_everyone"), "rules_after")
    assert "refused 1 PermissionError" in text
    assert scores(course, "signals_everyone") == pytest.approx(unrun_perfect())
