"""The class report: reading hand-ins without running them, and the numbers on a graded class.

The unit tests build hand-in folders by hand; the rest read the session's graded course
(conftest's `cycle`) and compare the report with what each synthetic profile must give, with the
view/copy oracle of conftest for classify and the gradebook as read_grades reads it.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import json
from collections import Counter
from pathlib import Path

import nbformat
import pytest
import torch
from support.course_notebook import RELEASE, ROOT, hidden_traps
from support.instructor_notebooks import run_on_course
from support.oracles import (
    TWENTY,
    answer_meaning,
    classify_oracle,
    lock_of,
    next_ops_held,
    rule_held,
    student_classify,
)
from support.the_class import predicted_before_looking

from viewcopy.course.assignment import CLASSIFY_CELLS, NOTEBOOK
from viewcopy.course.handin import (
    CHANGED,
    FORGED,
    LOCKED,
    NEVER_LOCKED,
    NO_SUBMISSION,
    UNREADABLE,
    Unreadable,
    predictions_literal,
    read_handin,
    read_predictions,
)
from viewcopy.demo.answers import RIGHT
from viewcopy.demo.synthetic import Student, fill, predictions_source, wrong_on
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.predictions import TWENTY as TWENTY_PART
from viewcopy.exercise.predictions import parse_predictions
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.flow import write_lock
from viewcopy.locking.record import LOCK_FILE
from viewcopy.notebook import checks
from viewcopy.notebook.cases import Case, CaseResult, run_case
from viewcopy.notebook.miss_lines import Miss, miss_line, parse_misses, total_line
from viewcopy.report.build import build_report
from viewcopy.report.files import FIGURES, write_report
from viewcopy.report.numbers import RulesHeld
from viewcopy.report.rows import rows
from viewcopy.report.summary import terminal_summary

pytestmark = [pytest.mark.course]

REPORT_NOTEBOOK = ROOT / "notebooks" / "class_report.ipynb"
PNG = b"\x89PNG\r\n\x1a\n"

# --- the printed miss lines and their parser ----------------------------------------------------


def classify_output(classify, cases, capsys) -> str:
    capsys.readouterr()
    checks.classify_credit(classify, cases, points=1)
    return capsys.readouterr().out


def test_parse_misses_reads_back_every_miss_classify_credit_prints(revealed, capsys):
    cases = [c for c in hidden_traps() if c.device == "cpu"] + TWENTY

    def mixed(result, parent):
        if result.numel() == 0:
            raise ValueError("two\nlines: said 'view', measured 'copy'")
        if result.dim() > 2:
            return "View"
        return student_classify("data_ptr")(result, parent)

    outcomes = [run_case(mixed, case) for case in cases]
    misses = parse_misses(classify_output(mixed, cases, capsys))
    missed = [o for o in outcomes if not o.right]
    assert [(m.device, m.hint) for m in misses] == [(o.case.device, o.case.hint) for o in missed]
    assert [m.answered for m in misses] == [not o.problem for o in missed]
    assert {m.why.split()[0] for m in misses} == {"said", "raised", "returned"}
    assert any(": " in m.hint for m in misses), "hints with a colon survive"
    assert all("\n" not in miss_line(o) for o in missed)
    assert parse_misses(miss_line(missed[0]) + "\n" + total_line(0, 1)) == [misses[0]]


def test_what_a_student_prints_cannot_add_misses(revealed, capsys):
    fake = "  [cpu] a made-up trap: said 'view', measured 'copy'\nclassify right on 0/9 cases."

    def chatty(result, parent):
        print(fake)
        return student_classify("storage")(result, parent)

    text = classify_output(chatty, TWENTY[:3], capsys)
    assert fake in text
    assert parse_misses(text) == []


def test_an_unfinished_run_has_no_misses_to_read():
    assert parse_misses("") is None
    assert parse_misses("torch was modified in this notebook (torch.Tensor.clone); ...") is None
    assert parse_misses("classify right on 1/3 cases.") is None, "two miss lines are missing"
    assert parse_misses("classify right on 3/3 cases.") == []


def test_a_miss_line_round_trips_through_its_parser():
    case = Case("a parent that is itself a view: a transpose of it", "torch.arange(6.)", "x[1:]")
    line = miss_line(CaseResult(case, "view", "copy"))
    assert parse_misses(f"{line}\n{total_line(0, 1)}") == [
        Miss("cpu", case.hint, "said 'copy', measured 'view'")
    ]


# --- reading PREDICTIONS without running anything ----------------------------------------------


def test_a_hostile_predictions_cell_is_unreadable_and_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    hostile = [
        f'PREDICTIONS = __import__("os").system("touch {marker}")',
        f'import os\nos.system("touch {marker}")\nPREDICTIONS = {{}}',
        f'PREDICTIONS = {{1: ("view", "r")}}\nopen("{marker}", "w")',
        f'@__import__("os").system("touch {marker}")\ndef f(): pass\nPREDICTIONS = {{}}',
        f'PREDICTIONS = {{i: ("view", "r") for i in range(1, 21) if open("{marker}", "w")}}',
        "PREDICTIONS = lab.measured_predictions()",
        "PREDICTIONS = {1: ('view', 'r')}\nPREDICTIONS[2] = ('copy', 'r')",
        "PREDICTIONS: dict = {}",
        "PREDICTIONS = {1: (",
        "PREDICTIONS = " + "[" * 100_000 + "]" * 100_000,
        "# only a comment",
    ]
    for source in hostile:
        with pytest.raises(Unreadable):
            predictions_literal(source)
    assert not marker.exists()


def test_a_written_out_dict_is_read_with_its_last_assignment():
    right = measured_predictions()
    source = '"""my guesses"""\nPREDICTIONS = {}\n' + predictions_source(right)
    assert predictions_literal(source) == right
    notebook = nbformat.read(RELEASE, as_version=4)
    fill(notebook, {"predictions": source})
    assert read_predictions(notebook) == parse_predictions(right)


def test_the_release_stub_is_unreadable_with_its_first_problem():
    with pytest.raises(Unreadable, match=r"item 1: the verdict is empty \(and \d+ more\)"):
        read_predictions(nbformat.read(RELEASE, as_version=4))


def hand_in(folder: Path, predictions_cell: str | None, lock: dict | None) -> Path:
    """A submitted folder: the release notebook with this predictions cell, and a lock."""
    folder.mkdir(parents=True)
    if predictions_cell is not None:
        notebook = nbformat.read(RELEASE, as_version=4)
        fill(notebook, {"predictions": predictions_cell})
        nbformat.write(notebook, folder / NOTEBOOK)
    if lock is not None:
        write_lock(TWENTY_PART, parse_predictions(lock), folder)
    return folder


def edit_lock(folder: Path, change) -> None:
    path = folder / LOCK_FILE
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_each_lock_state_from_hand_made_folders(tmp_path):
    right = measured_predictions()
    other = {**right, 5: ("copy" if right[5][0] == "view" else "view", "changed my mind")}
    source = predictions_source(right)
    locked = read_handin(hand_in(tmp_path / "a", source, right), "a")
    assert (locked.lock, locked.counts, locked.problem) == (LOCKED, True, "")
    changed = read_handin(hand_in(tmp_path / "b", predictions_source(other), right), "b")
    assert (changed.lock, changed.counts, changed.changed_items) == (CHANGED, False, (5,))
    assert changed.before_looking == parse_predictions(right), "the lock is what was predicted"
    never = read_handin(hand_in(tmp_path / "c", source, None), "c")
    assert (never.lock, never.counts, never.before_looking) == (
        NEVER_LOCKED,
        False,
        never.submitted,
    )

    forged = hand_in(tmp_path / "d", source, right)
    edit_lock(forged, lambda d: d["predictions"].update({"5": ["copy", "edited by hand"]}))
    assert read_handin(forged, "d").lock == FORGED
    assert read_handin(forged, "d").before_looking is None
    refingered = hand_in(tmp_path / "e", predictions_source(other), right)
    edit_lock(refingered, lambda d: d.update(fingerprint="0" * 64))
    assert read_handin(refingered, "e").lock == FORGED
    garbage = hand_in(tmp_path / "f", source, None)
    (garbage / LOCK_FILE).write_text("{not json")
    assert (read_handin(garbage, "f").lock, read_handin(garbage, "f").counts) == (FORGED, False)

    directory = hand_in(tmp_path / "i", source, None)
    (directory / LOCK_FILE).mkdir()
    assert read_handin(directory, "i").lock == FORGED

    unreadable = read_handin(hand_in(tmp_path / "g", "PREDICTIONS = make()", right), "g")
    assert (unreadable.lock, unreadable.submitted) == (UNREADABLE, None)
    assert "predictions unreadable" in unreadable.problem
    assert read_handin(hand_in(tmp_path / "h", None, None), "h").lock == NO_SUBMISSION


def test_the_report_counts_rules_after_only_for_a_twenty_locked_before_the_reveal(tmp_path):
    """A miss with a rule after, in a sheet locked and unchanged, never locked, or changed after
    its lock: only the locked sheet's rule counts (as the rules-after check credits it); an
    unlocked sheet has no locked misses to write rules for."""
    right = measured_predictions()
    item = catalogue.OPS[0].item
    missed = wrong_on((item,), right, measured_truth())
    rules = f"RULES_AFTER = {{{item}: 'the strides decide it'}}\n"
    submitted = tmp_path / "submitted"
    for student, lock in (("locked", missed), ("never", None), ("changed", right)):
        folder = hand_in(submitted / student / "view_or_copy", predictions_source(missed), lock)
        notebook = nbformat.read(folder / NOTEBOOK, as_version=4)
        fill(notebook, {"rules_after": rules})
        nbformat.write(notebook, folder / NOTEBOOK)
    by_student = {s.student: s for s in build_report(tmp_path).students}
    assert [by_student[s].lock for s in ("locked", "never", "changed")] == [
        LOCKED,
        NEVER_LOCKED,
        CHANGED,
    ]
    assert by_student["locked"].rules == {catalogue.OPS[0].family: RulesHeld(1)}
    assert by_student["never"].rules == {} and by_student["changed"].rules == {}


def test_a_course_without_gradebook_or_autograded_notebooks_is_reported_not_a_crash(tmp_path):
    right = measured_predictions()
    submitted = tmp_path / "submitted"
    hand_in(submitted / "ok" / "view_or_copy", predictions_source(right), right)
    hand_in(submitted / "hostile" / "view_or_copy", 'PREDICTIONS = __import__("os")', None)
    hand_in(submitted / "nothing" / "view_or_copy", None, None)
    report = build_report(tmp_path)
    by_student = {s.student: s for s in report.students}
    assert [by_student[s].lock for s in ("hostile", "nothing", "ok")] == [
        NEVER_LOCKED,
        NO_SUBMISSION,
        LOCKED,
    ]
    assert (by_student["ok"].right, by_student["ok"].credited) == (20, 20)
    problems = dict(Counter(s for s, _ in report.problems))
    assert problems == {"hostile": 3, "nothing": 1, "ok": 2}, report.problems
    assert any("predictions unreadable" in p for s, p in report.problems if s == "hostile")
    assert report.judged == 1 and all(m.wrong == 0 for m in report.misconceptions)
    written = write_report(report, tmp_path / "out")
    assert all(p.stat().st_size for p in written)


# --- the report on the session's graded class ---------------------------------------------------


@pytest.fixture(scope="module")
def graded(cycle):
    course, results = cycle
    return course, results, build_report(course)


def expected_lock(student: Student) -> str:
    if not student.runs:
        return NEVER_LOCKED
    return CHANGED if "predictions" in student.edits_after_run else LOCKED


def test_misconception_map_counts_the_profiles_wrong_items_before_looking(graded):
    _, results, report = graded
    right = {item: verdict for item, (verdict, _) in measured_predictions().items()}
    said: dict[int, Counter] = {item: Counter() for item in right}
    for student_id, result in results.items():
        before = predicted_before_looking(result.student)
        if before is None:
            continue
        wrong = {i for i in right if before[i] != right[i]}
        if not result.student.edits_after_run.get("predictions"):
            assert wrong == set(result.student.wrong_items), student_id
        for item in wrong:
            said[item][before[item]] += 1
    assert {m.item: dict(m.said) for m in report.misconceptions} == {
        i: dict(c) for i, c in said.items()
    }
    assert sum(m.wrong for m in report.misconceptions) == sum(c.total() for c in said.values()) > 0
    assert not any("edited_after_lock" in m.students for m in report.misconceptions)
    assert report.judged == sum(bool(r.student.cells) for r in results.values())


def test_lock_states_and_scores_follow_the_profiles_and_the_gradebook(graded):
    _, results, report = graded
    lines = {s.student: s for s in report.students}
    assert set(lines) == set(results)
    for student_id, result in results.items():
        student, line = result.student, lines[student_id]
        assert line.lock == expected_lock(student), student_id
        right = 20 - len(student.wrong_items) if student.cells else None
        assert line.right == right, student_id
        assert line.credited == (right if line.lock == LOCKED else 0), student_id
        credit = round(5 * min(line.credited, 16) / 16, 4)
        assert result.scores["score_predictions"] == pytest.approx(credit), student_id
        assert line.grades == {c: (result.scores[c], result.max_scores[c]) for c in result.scores}
        assert line.auto_total == pytest.approx(result.auto_total)
    profiles = Counter(expected_lock(r.student) for r in results.values())
    assert report.lock_counts == {state: profiles[state] for state in report.lock_counts}
    assert profiles[CHANGED] and profiles[NEVER_LOCKED] and profiles[LOCKED]
    assert sum(s.passes for s in report.students) == sum(s.credited >= 16 for s in lines.values())


def expected_misses(student: Student) -> dict[str, dict[str, bool]] | None:
    """Per classify cell, the CPU cases the profile's classify misses: hint -> answered."""
    if student.classifier is None and student.cells:
        return None
    cases = {"test_classify_visible": TWENTY, "test_classify_hidden": checks_traps()}
    if not student.cells:  # the release stub returns None on every case
        return {cell: dict.fromkeys((c.hint for c in cs), False) for cell, cs in cases.items()}
    classify = student_classify(student.classifier)
    out: dict[str, dict[str, bool]] = {}
    for cell, cs in cases.items():
        out[cell] = {}
        for case in cs:
            parent = eval(case.parent, {"torch": torch})
            result = eval(case.op, {"torch": torch, "x": parent})
            got = None
            with contextlib.suppress(Exception):
                got = classify(result, parent)
            if got != classify_oracle(result, parent):
                out[cell][case.hint] = got in ("view", "copy")
    return out


def checks_traps() -> list[Case]:
    return [c for c in hidden_traps() if c.device == "cpu"]


def test_trap_misses_are_where_each_classifier_disagrees_with_the_oracle(graded):
    _, results, report = graded
    lines = {s.student: s for s in report.students}
    wrong: dict[tuple[str, str], set[str]] = {}
    failed: dict[tuple[str, str], set[str]] = {}
    for student_id, result in results.items():
        expected = expected_misses(result.student)
        found = lines[student_id].classify
        if expected is None:
            assert found == dict.fromkeys(CLASSIFY_CELLS), student_id
            continue
        for cell in CLASSIFY_CELLS:
            cpu = {m.hint: m.answered for m in found[cell] if m.device == "cpu"}
            assert cpu == expected[cell], (student_id, cell)
            for hint, answered in cpu.items():
                (wrong if answered else failed).setdefault((cell, hint), set()).add(student_id)
    cpu_traps = [t for t in report.traps if t.device == "cpu"]
    assert {(t.cell, t.hint): set(t.wrong) for t in cpu_traps if t.wrong} == wrong
    assert {(t.cell, t.hint): set(t.failed) for t in cpu_traps if t.failed} == failed
    data_ptr = {m.hint for m in lines["data_ptr"].classify["test_classify_hidden"]}
    offset = "x[2:, 1:] of a 5x6 parent"  # a storage offset: data_ptr moves, storage does not
    assert offset in {c.hint for c in hidden_traps()} and offset in data_ptr
    assert report.classify_runs == dict.fromkeys(CLASSIFY_CELLS, len(results) - 1)


def test_specificity_is_the_gradebook_share_of_specific_answers(graded):
    _, results, report = graded
    for q in report.specificity:
        scores = [r.scores[f"specific_{q.item}"] for r in results.values()]
        assert (q.specific, q.graded) == (sum(s == 1 for s in scores), len(results))
        # the bank's right answers name strides, storage or bytes; no other answer does
        assert q.specific == sum(
            answer_meaning(r.student, q.item) == RIGHT for r in results.values()
        )
    assert report.specificity[3].specific < report.specificity[0].specific, "data_ptr's 24"


def csv_rows(path: Path) -> dict[tuple[str, str, str], str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {(r["section"], r["key"], r["measure"]): r["value"] for r in csv.DictReader(handle)}


def test_the_csv_holds_the_report_s_numbers_and_each_figure_is_a_png(graded, tmp_path):
    _, _, report = graded
    written = write_report(report, tmp_path)
    values = csv_rows(tmp_path / "report.csv")
    for m in report.misconceptions:
        assert int(values["misconceptions", f"{m.item} {m.expr}", "wrong"]) == m.wrong
        for verdict, count in m.said.items():
            assert int(values["misconceptions", f"{m.item} {m.expr}", f"said {verdict}"]) == count
    for state, count in report.lock_counts.items():
        assert int(values["lock", state, "students"]) == count
    for s in report.students:
        assert values["student", s.student, "lock"] == s.lock
        assert values["student", s.student, "right"] == ("" if s.right is None else str(s.right))
        assert int(values["student", s.student, "credited_right"]) == s.credited
        assert float(values["student", s.student, "auto_total"]) == pytest.approx(s.auto_total)
        for cell, (score, _) in s.grades.items():
            expected = "" if score is None else score
            assert values["grades", s.student, cell] == str(expected)
    for t in report.traps:
        key = f"{t.cell} [{t.device}] {t.hint}"
        assert int(values["traps", key, "wrong"]) == len(t.wrong)
        assert int(values["traps", key, "failed"]) == len(t.failed)
    for q in report.specificity:
        assert int(values["specificity", str(q.item), "specific"]) == q.specific
        assert float(values["specificity", str(q.item), "fraction"]) == pytest.approx(q.fraction)
    names = {p.name for p in written}
    distributions = {n for n in names if n.startswith("distribution_") and n.endswith(".png")}
    assert len(distributions) == len(report.distributions) > 0
    assert names - distributions == {
        "report.csv",
        "report.html",
        *(f"{name}.png" for name in FIGURES),
    }
    for name in FIGURES:
        data = (tmp_path / f"{name}.png").read_bytes()
        assert data.startswith(PNG) and len(data) > 1000, name


def test_the_report_notebook_runs_on_the_course_and_shows_every_figure(graded):
    course, _, _ = graded
    outputs = run_on_course(REPORT_NOTEBOOK, f"Path({str(course)!r})")
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == len(FIGURES)
    tables = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "x.t().reshape(8, 3)" in tables and "x[2:, 1:] of a 5x6 parent" in tables


def test_transfer_names_the_memoriser_and_not_the_rule_learner(graded, tmp_path):
    _, _, report = graded
    lines = {s.student: s for s in report.students}
    memoriser, learner = lines["memoriser"], lines["rule_learner"]
    assert learner.next_right == learner.next_total == 10 and not learner.memorised
    assert memoriser.right == 20 and memoriser.next_right < learner.next_right
    assert memoriser.memorised == (memoriser.next_right < 0.6 * memoriser.next_total)
    families = {f.family for f in report.transfer}
    assert {op.family for op in catalogue.OPS} <= families
    for f in report.transfer:
        assert f.twenty_right <= f.twenty_total and f.next_right <= f.next_total
    write_report(report, tmp_path)
    with (tmp_path / "report.csv").open() as handle:
        sections = {row["section"] for row in csv.DictReader(handle)}
    assert "transfer" in sections and (tmp_path / "transfer.png").is_file()


def test_the_report_names_who_thought_each_copying_production_line_free(graded):
    _, results, report = graded
    assert report.thought_free  # the forward has copying lines, by measurement
    for line, code, students in report.thought_free:
        visible = "contiguous" in code or ("transpose" in code and "reshape" in code)
        assert ("typical" in students) == (not visible), (line, code)
        assert "perfect" not in students
    assert ("production", "thought_free") in {(r[0], r[2]) for r in rows(report)}


def test_the_report_says_per_family_how_often_rules_after_held_on_the_next_ops(graded):
    course, results, report = graded
    lines = {s.student: s for s in report.students}
    expected: dict[str, list] = {}
    for student_id in ("rule_learner", "keywords", "perfect"):
        student = results[student_id].student
        rules = ast.literal_eval(student.cells["rules_after"].split("=", 1)[1])
        held = next_ops_held(student, lock_of(course, student_id))
        mine: dict[str, list] = {}
        for item in student.wrong_items:
            family = catalogue.op(item).family
            counts = mine.setdefault(family, [0, 0, 0.0])
            counts[0] += 1
            if family in held:
                counts[1] += 1
                counts[2] += rule_held(rules[item], family, held)
        shown = lines[student_id].rules
        assert set(shown) == set(mine), student_id
        for family, counts in mine.items():
            assert shown[family] == pytest.approx(tuple(counts)), (student_id, family)
        for family, counts in mine.items():
            total = expected.setdefault(family, [0, 0, 0.0])
            total[:] = [a + b for a, b in zip(total, counts, strict=True)]
    assert lines["perfect"].rules == {} and not lines["perfect"].rules_never_held
    learner, keywords = lines["rule_learner"], lines["keywords"]
    assert all(t == 0 or h == t for _, t, h in learner.rules.values())  # its rules transfer
    assert keywords.rules_never_held == (
        any(t for _, t, _ in keywords.rules.values())
        and not any(h for _, _, h in keywords.rules.values())
    )
    sections = {(r[0], r[2]) for r in rows(report)}
    assert ("rules_after", "with_rule") in sections and ("rules_after", "held_share") in sections
    for family, (with_rule, _, _) in report.rule_families.items():
        assert with_rule >= expected.get(family, [0])[0]


def test_the_report_says_which_release_locked_and_graded_each_hand_in(graded, tmp_path):
    """Read back independently: the lock file's own `viewcopy` field (raw JSON) and record.csv's
    `viewcopy` column (the csv module); a frozen hand-in of 0.1.0 reads as before versions."""
    from importlib.metadata import version

    course, _, report = graded
    record = {
        row["student_id"]: row.get("viewcopy") or "before versions"
        for row in csv.DictReader((course / "grade_logs" / report.assignment / "record.csv").open())
    }
    write_report(report, tmp_path)
    values = csv_rows(tmp_path / "report.csv")
    locked_by = Counter()
    for s in report.handed_in:
        lock_file = course / "submitted" / s.student / report.assignment / LOCK_FILE
        raw = json.loads(lock_file.read_text()) if lock_file.exists() else {}
        lock = raw.get("viewcopy") or "before versions"
        if lock_file.exists():
            assert values["student", s.student, "lock_version"] == lock
        assert values["student", s.student, "graded_version"] == record.get(
            s.student, "before versions"
        )
        locked_by[values["student", s.student, "lock_version"]] += 1
    assert locked_by[version("viewcopy")] > 0  # the class locked with this release
    assert set(record.values()) == {version("viewcopy")}  # viewcopy grade graded the class
    assert f"locks {version('viewcopy')} {locked_by[version('viewcopy')]}" in terminal_summary(
        report
    )
