"""The class report's numbers from a graded course: what an instructor needs before the next
lecture (report.numbers names them).

It reads the nbgrader course folder and runs none of the students' code: PREDICTIONS and the lock
from `submitted/` (viewcopy.course.handin), the classify tests' printed misses from
`autograded/` (viewcopy.notebook.miss_lines), the scores from `gradebook.db` (opened read-only).
Predictions are judged against the truth measured on this machine, never against a typed key.
Each op is also analysed as a test item (report.item_analysis), and each graded part's scores
gathered (report.distributions).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import nbformat
import torch

from viewcopy.course.assignment import (
    ASSIGNMENT,
    CLASSIFY_CELLS,
    NOTEBOOK,
    Grades,
    grade_id,
    read_grades,
    sqlite_file,
)
from viewcopy.course.class_scores import NoScores, class_scores
from viewcopy.course.folder import Course
from viewcopy.course.handin import NO_SUBMISSION, HandIn, read_handin
from viewcopy.engine.devices import available_devices
from viewcopy.engine.version import deprecated_path
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import ItemTruth, measured_truth
from viewcopy.exercise.next_ops import measure_pool, use_course_ops
from viewcopy.exercise.next_predictions import NEXT
from viewcopy.exercise.production import PRODUCTION
from viewcopy.exercise.production_model import copy_lines, forward_listing
from viewcopy.exercise.rules import rule_after_problem
from viewcopy.exercise.scoring import Score, base_rate, judge_prediction, score_sheet
from viewcopy.grading.record import not_graded
from viewcopy.grading.versions import versions_of
from viewcopy.locking.flow import LockState
from viewcopy.notebook.miss_lines import Miss, parse_misses
from viewcopy.notebook.rules_after import held_share, next_ops_held
from viewcopy.report.distributions import part_distributions
from viewcopy.report.item_analysis import next_items, twenty_items
from viewcopy.report.numbers import (
    ClassReport,
    FamilyTransfer,
    ItemMisses,
    RulesHeld,
    Specificity,
    StudentLine,
    ThoughtFree,
    TrapMisses,
)


def build_report(folder: Path, assignment: str = ASSIGNMENT) -> ClassReport:
    """Read the graded course in `folder` and judge it against the truth measured here."""
    course = Course.at(folder)
    settings = course.settings  # a setting the course cannot use stops it first
    use_course_ops(settings.next_ops)  # each hand-in's next ops, drawn as its release drew them
    gradebook = sqlite_file(course.gradebook_url)
    if not ((gradebook is None or gradebook.is_file()) or course.submitted.is_dir()):
        missing = f"{course.root} has no {gradebook.name} and no submitted/"
        raise FileNotFoundError(f"{missing}: not graded yet")
    devices = available_devices()
    table = measured_truth(devices)
    grades = read_grades(course.root, assignment)
    failures = not_graded(course, assignment)
    given = _given(course, assignment, failures)
    found = sorted({*grades, *_folders(course.submitted, assignment)})
    policy, scoring = settings.lock, settings.scoring
    handins = [read_handin(course.hand_in(s, assignment), s, policy, assignment) for s in found]
    lines = (
        _student_line(
            h, table, grades.get(h.student), course.autograded, assignment, failures, scoring
        )
        for h in handins
    )
    students = tuple(replace(line, given=given.get(line.student)) for line in lines)
    judged = [h for h in handins if h.before_looking is not None]
    graded = {cell for line in students for cell in line.grades}
    items, reliability = twenty_items(judged, table)
    return ClassReport(
        assignment=assignment,
        course=course.root,
        devices=devices,
        torch=torch.__version__,
        students=students,
        judged=len(judged),
        misconceptions=tuple(_item_misses(item, judged, table) for item in catalogue.ITEMS),
        classify_runs={
            cell: sum(s.classify.get(cell) is not None for s in students)
            for cell in CLASSIFY_CELLS
            if cell in graded or not graded  # a master without the stretch has no runs
        },
        traps=_traps(students),
        specificity=tuple(_specificity_share(q.item, students) for q in catalogue.QUESTIONS),
        lock_service=policy.service_data is not None,
        scoring=scoring,
        base=base_rate(table),
        transfer=_transfer(students),
        thought_free=_thought_free(handins),
        versions=versions_of(course, assignment),
        items=items + next_items(judged, policy, assignment),
        reliability=reliability,
        distributions=part_distributions(students, settings.parts),
        similar=_similar(course, assignment),
    )


def _similar(course: Course, assignment: str):
    """The hand-ins that look alike, or None without a release to subtract the starter code."""
    from viewcopy.report.similarity import similar_pairs

    try:
        return similar_pairs(course, assignment)
    except FileNotFoundError:
        return None


def _thought_free(handins: list[HandIn]) -> tuple[ThoughtFree, ...]:
    """Per copying line of the production forward, the students who predicted it free."""
    sheets = {h.student: h.later.get(PRODUCTION.key) for h in handins}
    copying = copy_lines()
    return tuple(
        ThoughtFree(
            n, code, tuple(s for s, sheet in sheets.items() if sheet and sheet[n].verdict != "copy")
        )
        for n, code in forward_listing()
        if n in copying
    )


def _given(course: Course, assignment: str, failures: Mapping[str, str]) -> dict[str, float]:
    """Each student's score as the LMS push and the import file give it (course.class_scores),
    none for a hand-in whose last grading failed or was interrupted."""
    try:
        _, scores = class_scores(course, assignment)
    except NoScores:
        return {}
    return {
        s: found.score
        for s, found in scores.items()
        if found.score is not None and s not in failures
    }


def _folders(root: Path, assignment: str) -> list[str]:
    return [p.parent.name for p in root.glob(f"*/{assignment}") if p.is_dir()]


def _student_line(
    handin: HandIn,
    table: Mapping[int, ItemTruth],
    grades: Grades | None,
    autograded: Path,
    assignment: str,
    failures: Mapping[str, str],
    scoring: str,
) -> StudentLine:
    problems = [handin.problem] if handin.problem else []
    score = None
    if handin.submitted is not None:
        state = LockState.LOCKED if handin.counts else "not counted"
        score = score_sheet(handin.submitted, table, state, policy=scoring)
    if not grades and handin.lock != NO_SUBMISSION:
        problems.append("no graded submission in the gradebook")
    classify, missing = read_classify(autograded / handin.student / assignment / NOTEBOOK)
    if handin.refused:
        problems.append(
            f"tried to lock again after the reveal: the lock service refused {handin.refused} "
            "lock(s)"
        )
    if handin.student in failures:
        problems.append(failures[handin.student])
    elif missing and handin.lock != NO_SUBMISSION:
        problems.append(missing)
    return StudentLine(
        student=handin.student,
        lock=handin.lock,
        right=score.correct if score else None,
        credited=score.correct if score and handin.counts else 0,
        grades=grades or {},
        classify=classify,
        problems=tuple(problems),
        refused=handin.refused,
        balanced=score.balanced if score else None,
        passes=bool(score and score.passed),
        flag=_flag(score),
        **_next_part(handin, table),
        rules=_rules_part(handin, table),
    )


def _rules_part(handin: HandIn, table: Mapping[int, ItemTruth]) -> dict[str, RulesHeld]:
    """Per family: the missed items with a rule after, how many were tested on locked next ops
    of their family, and how far they held there (as `check_rules_after` credits them; the rest
    are untested, or judged by what they name where the draw holds none of their family). None
    for a twenty whose lock does not count (`counts`, the grader's verdict): it has no locked
    misses to write rules for, and `check_rules_after` credits none."""
    if handin.submitted is None or not handin.counts or not isinstance(handin.rules_after, dict):
        return {}
    held = next_ops_held(handin.record)
    found: dict[str, RulesHeld] = {}
    for item, prediction in handin.submitted.items():
        right = judge_prediction(prediction, table[item])[0]
        if right or rule_after_problem(handin.rules_after.get(item)) is not None:
            continue
        family = catalogue.op(item).family
        share = held_share(held.get(family, ()))
        tested = RulesHeld(1) if share is None else RulesHeld(1, 1, share)
        found[family] = found.get(family, RulesHeld()).plus(tested)
    return found


def _next_part(handin: HandIn, table: Mapping[int, ItemTruth]) -> dict:
    """The StudentLine fields of the next ops: right, and per family twenty against next."""
    ops, written = handin.next_ops, handin.later.get(NEXT.key)
    if written is None or handin.submitted is None:
        return {}
    measured = measure_pool()
    families: dict[str, FamilyTransfer] = {}

    def count(family: str, done: FamilyTransfer) -> None:
        families[family] = families.get(family, FamilyTransfer(family)).plus(done)

    for op in catalogue.OPS:
        right = judge_prediction(handin.submitted[op.item], table[op.item])[0]
        count(op.family, FamilyTransfer(op.family, twenty_right=int(right), twenty_total=1))
    hits = [written[op.id].verdict == measured[op.id].verdict for op in ops]
    for op, hit in zip(ops, hits, strict=True):
        count(op.family, FamilyTransfer(op.family, next_right=int(hit), next_total=1))
    return {"next_right": sum(hits), "next_total": len(ops), "families": families}


def _transfer(students: tuple[StudentLine, ...]) -> tuple[FamilyTransfer, ...]:
    """Per family, summed over the students with a next sheet; worst transfer first."""
    sums: dict[str, FamilyTransfer] = {}
    for s in students:
        for family, counts in s.families.items():
            sums[family] = sums.get(family, FamilyTransfer(family)).plus(counts)
    rows = sums.values()
    return tuple(sorted(rows, key=lambda r: (r.gap is None, -(r.gap or 0), r.family)))


def _flag(score: Score | None) -> str:
    if score is None or not score.no_better_than_base:
        return ""
    return "constant" if score.constant else "no better than the base rate"


def read_classify(path: Path) -> tuple[dict[str, tuple[Miss, ...] | None], str]:
    """The misses each classify test cell printed in an autograded notebook (None: no finished
    run), and what was missing, if anything."""
    none = dict.fromkeys(CLASSIFY_CELLS)
    try:
        notebook = nbformat.read(path, as_version=4)
    except FileNotFoundError:
        return none, "no autograded notebook"
    except (OSError, ValueError, AttributeError) as exc:
        return none, f"the autograded notebook is unreadable ({exc})"
    out = dict(none)
    for cell in notebook.cells:
        if grade_id(cell) in out and cell.cell_type == "code":
            text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
            misses = parse_misses(text)
            out[grade_id(cell)] = None if misses is None else tuple(misses)
    return out, ""


def _item_misses(item: int, judged: list[HandIn], table: Mapping[int, ItemTruth]) -> ItemMisses:
    truth = table[item]
    wrong = [
        (h.student, h.before_looking[item].verdict)
        for h in judged
        if not judge_prediction(h.before_looking[item], truth)[0]
    ]
    flips = f"; flips with {', '.join(truth.flips)}" if truth.flips else ""
    return ItemMisses(
        item=item,
        expr=catalogue.op(item).expr,
        truth=f"{truth.reference}{flips}",
        said=dict(Counter(verdict for _, verdict in wrong).most_common()),
        students=tuple(student for student, _ in wrong),
    )


def _traps(students: tuple[StudentLine, ...]) -> tuple[TrapMisses, ...]:
    caught: dict[tuple[str, str, str], tuple[list[str], list[str]]] = {}
    for s in students:
        for cell, misses in s.classify.items():
            # a case counts once per student, whatever the output repeats
            once = {(cell, m.device, m.hint): m.answered for m in misses or ()}
            for key, answered in once.items():
                wrong, failed = caught.setdefault(key, ([], []))
                (wrong if answered else failed).append(s.student)
    traps = [TrapMisses(*key, tuple(w), tuple(f)) for key, (w, f) in caught.items()]
    return tuple(sorted(traps, key=lambda t: (-len(t.wrong), -t.caught, t.cell, t.hint)))


def _specificity_share(item: int, students: tuple[StudentLine, ...]) -> Specificity:
    scores = [s.grades[f"specific_{item}"] for s in students if f"specific_{item}" in s.grades]
    specific = sum(score is not None and score >= maximum for score, maximum in scores)
    return Specificity(item, specific, len(scores))


MOVED = {"rows": "rows", "table": "rows", "terminal_summary": "summary"}
"""What notebooks/class_report.ipynb of releases before the report's split imports from here, and
the module of the report it lives in now: an instructor's copy of that notebook keeps working, with
a DeprecationWarning, until 1.0.0 (CHANGELOG.md)."""
__getattr__, _ = deprecated_path(
    __name__, list(MOVED), {name: f"viewcopy.report.{module}" for name, module in MOVED.items()}
)
