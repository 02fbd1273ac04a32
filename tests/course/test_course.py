"""The nbgrader course end to end, the way nbgrader tests itself: a temporary course folder,
generate, validate, synthetic and tampered submissions, autograde, feedback, export.

Slow (a kernel per notebook, twice per student): one cycle (conftest's `cycle`, a graded copy of
the session's class in tests/support/the_class.py) serves every test in this module and in
test_report.py; conftest's `plain` is plain `nbgrader autograde` of the same hand-ins.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from support.course_notebook import RELEASE, RELEASE_0_1_0_70CF16B, ROOT, SOURCE, hidden_traps
from support.oracles import expected_scores, lock_of
from support.the_class import NON_ASCII

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    grade_id,
    nbgrader_env,
    read_grades,
)
from viewcopy.locking.record import LOCK_FILE

pytestmark = [pytest.mark.course]

NBGRADER = shutil.which("nbgrader", path=nbgrader_env()["PATH"])


def test_every_student_gets_exactly_what_the_profile_must_get(cycle):
    course, results = cycle
    for student_id, result in results.items():
        expected = expected_scores(result.student, lock_of(course, student_id))
        assert result.scores == pytest.approx(expected), student_id


def test_a_twenty_never_locked_earns_nothing_for_rules_after_and_its_feedback_says_why(cycle):
    """`never_locked` is all right but never ran its notebook: no miss needed a rule, and its
    rules after used to earn 2/2 (the grader's recomputation). A twenty not locked before the
    reveal has no locked misses to write rules for."""
    course, results = cycle
    never = results["never_locked"]
    assert never.max_scores["check_rules_after"] == 2
    assert never.scores["score_predictions"] == never.scores["check_rules_after"] == 0
    page = course / "feedback" / "never_locked" / ASSIGNMENT / "view_or_copy.html"
    assert "your PREDICTIONS were never locked before the reveal, so there were no locked" in (
        page.read_text(encoding="utf-8")
    )
    assert results["perfect"].scores["check_rules_after"] == 2


def test_a_hand_in_of_the_0_1_0_release_grades_as_the_current_release_does(cycle):
    _, results = cycle
    old, today = dict(results["release_0_1_0"].scores), dict(results["perfect"].scores)
    for later in ("score_next", "score_production"):  # parts 0.1.0 did not have: nbgrader
        assert old.pop(later) == 0  # restores their cells, which find nothing to grade
        today.pop(later)
    assert old == today and sum(v or 0 for v in today.values()) == pytest.approx(20)


def test_a_hand_in_of_the_0_1_0_70cf16b_release_lock_file_and_all_grades_as_today_s(cycle):
    course, results = cycle
    frozen = RELEASE_0_1_0_70CF16B / "hand_in" / LOCK_FILE
    held = course / "submitted" / "release_0_1_0_70cf16b" / ASSIGNMENT / LOCK_FILE
    assert held.read_bytes() == frozen.read_bytes()
    assert NON_ASCII in frozen.read_text("utf-8")
    assert results["release_0_1_0_70cf16b"].scores == results["perfect"].scores


def test_the_next_ops_separate_the_rule_learner_from_the_memoriser(cycle):
    _, results = cycle
    assert results["rule_learner"].scores["score_next"] == results["perfect"].scores["score_next"]
    assert results["perfect"].scores["score_next"] == 4
    assert results["memoriser"].scores["score_predictions"] == 5
    assert results["memoriser"].scores["score_next"] < 4


def next_ops_shown(path: Path) -> str:
    """What the next_ops cell of a notebook printed: the ids of its draw."""
    (cell,) = [c for c in nbformat.read(path, 4).cells if grade_id(c) == "next_ops"]
    return "".join(o.get("text", "") for o in cell.outputs)


def test_plain_nbgrader_autograde_draws_and_grades_the_next_ops_the_same(cycle, plain):
    course, _ = cycle
    students = ("rule_learner", "memoriser")
    ours, theirs = read_grades(course), read_grades(plain)
    for student in students:
        assert ours[student] == theirs[student], student
        graded = next_ops_shown(plain / "autograded" / student / ASSIGNMENT / NOTEBOOK)
        handed_in = next_ops_shown(course / "submitted" / student / ASSIGNMENT / NOTEBOOK)
        assert "NEXT_PREDICTIONS = {" in graded and graded == handed_in  # the same ten


def test_right_on_the_twenty_but_wrong_on_traps_loses_credit_correct_gets_all(cycle):
    _, results = cycle
    assert results["perfect"].scores["test_classify_hidden"] == 5
    for student_id in ("typical", "data_ptr", "fifteen"):
        assert results[student_id].scores["test_classify_hidden"] < 5
    assert results["typical"].scores["test_classify_visible"] == 3


def test_feedback_has_scores_reasons_and_diagrams_but_no_hidden_tests(cycle):
    course, results = cycle
    secrets = ["BEGIN HIDDEN TESTS", "TRAPS", "on_devices", "Rubric for the", "hand-graded"]
    trap_hints = [case.hint for case in hidden_traps()]
    for student_id in results:
        page = course / "feedback" / student_id / ASSIGNMENT / "view_or_copy.html"
        text = page.read_text(encoding="utf-8")
        leaked = [s for s in secrets if s in text]
        assert not leaked, (student_id, leaked)
        assert "Credit:" in text or student_id == "empty"
        if results[student_id].scores["test_classify_hidden"] == 5:  # no miss names a trap
            # (a trap may also be one of the hand-in's next ops, which its notebook showed)
            seen = (course / "submitted" / student_id / ASSIGNMENT / NOTEBOOK).read_text("utf-8")
            assert not [h for h in trap_hints if h in text and h not in seen], student_id
    perfect = (course / "feedback" / "perfect" / ASSIGNMENT / "view_or_copy.html").read_text()
    assert perfect.count('class="viewcopy-diagram"') == 1, "the explorer's static diagram"
    assert "application/vnd.jupyter.widget-view+json" not in perfect
    fifteen = (course / "feedback" / "fifteen" / ASSIGNMENT / "view_or_copy.html").read_text()
    assert "15/20 predictions right" in fifteen
    assert fifteen.count('data-part="verdict"') >= 5
    edited = course / "feedback" / "edited_after_lock" / ASSIGNMENT / "view_or_copy.html"
    assert "Changed after the lock" in edited.read_text()
    deleted = course / "feedback" / "deleted_classify" / ASSIGNMENT / "view_or_copy.html"
    page = deleted.read_text()
    assert "NameError: name 'classify' is not defined" in page
    assert page.count("Traceback (most recent call last)") == 1, "only the visible test's"


def test_export_matches_the_gradebook(cycle):
    course, results = cycle
    with (course / "grades.csv").open() as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == set(results)
    for student_id, result in results.items():
        assert float(rows[student_id]["raw_score"]) == pytest.approx(result.auto_total)
        master = {c.metadata.nbgrader["grade_id"]: c for c in nbformat.read(SOURCE, 4).cells
                  if c.metadata.get("nbgrader", {}).get("grade")}  # fmt: skip
        points = sum(c.metadata.nbgrader["points"] for c in master.values())
        assert float(rows[student_id]["max_score"]) == points == sum(result.max_scores.values())


def test_graded_cells_write_nothing_to_stderr_and_nothing_timed_out(cycle):
    course, results = cycle
    for student_id in results:
        graded = nbformat.read(
            course / "autograded" / student_id / ASSIGNMENT / "view_or_copy.ipynb", as_version=4
        )
        for cell in graded.cells:
            if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code":
                streams = [o for o in cell.outputs if o.get("name") == "stderr"]
                assert not streams, (student_id, cell.metadata.nbgrader.grade_id, streams)
    log = (course / "nbgrader.log").read_text()
    assert "CellTimeoutError" not in log and "Timeout" not in log


def test_release_is_what_generate_assignment_makes_from_the_master(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    shutil.copytree(ROOT / "source", tmp_path / "source")
    subprocess.run(
        [NBGRADER, "generate_assignment", ASSIGNMENT, "--create"],
        cwd=tmp_path,
        env=nbgrader_env(),
        check=True,
        capture_output=True,
    )
    fresh = tmp_path / "release" / ASSIGNMENT / "view_or_copy.ipynb"
    assert fresh.read_bytes() == RELEASE.read_bytes(), (
        "release/ is out of date: run `nbgrader generate_assignment view_or_copy --force`"
    )


def test_master_is_committed_without_outputs():
    master = nbformat.read(SOURCE, as_version=4)
    assert all(not c.get("outputs") for c in master.cells if c.cell_type == "code")


def validate(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [NBGRADER, "validate", str(path)], env=nbgrader_env(), capture_output=True, text=True
    )


def test_validate_passes_on_the_master_and_fails_on_the_release_stubs(tmp_path):
    master_folder = tmp_path / "course" / "source" / ASSIGNMENT  # where masters live
    master_folder.mkdir(parents=True)
    (tmp_path / "release").mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path / "course")
    shutil.copy(SOURCE, master_folder)
    shutil.copy(RELEASE, tmp_path / "release")
    master = validate(master_folder / "view_or_copy.ipynb")
    assert "Success! Your notebook passes all the tests." in master.stdout, master.stdout[-2000:]
    stub = validate(tmp_path / "release" / "view_or_copy.ipynb")
    assert "VALIDATION FAILED ON" in stub.stdout
    assert "PredictionError" in stub.stdout and "the verdict is empty" in stub.stdout


def test_feedback_opens_with_the_graded_parts_and_what_the_student_earned_in_each(cycle):
    course, results = cycle
    for student_id in ("perfect", "fifteen"):
        page = course / "feedback" / student_id / ASSIGNMENT / "view_or_copy.html"
        text = page.read_text(encoding="utf-8")
        scores = results[student_id].scores
        automatic = sum(v for v in scores.values() if v is not None)
        assert "your score" in text, student_id
        assert f"{automatic:g} + by hand" in text, (student_id, automatic)
