"""Test oracles: what is a view or a copy, and what each synthetic profile must score, decided
without going through viewcopy's measurement (NumPy's memory bounds and PyTorch itself on the
machine running the tests)."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Collection
from pathlib import Path

import nbformat
import numpy as np
import torch
from support.course_notebook import RELEASE, ROOT, hidden_traps

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, grade_id
from viewcopy.course.folder import Course
from viewcopy.demo.answers import EMPTY, PARAPHRASES, SAID_BY_EVERY_CLASS
from viewcopy.demo.classifiers import classify_source
from viewcopy.demo.synthetic import Student
from viewcopy.exercise import catalogue
from viewcopy.exercise.next_predictions import hand_in_draw
from viewcopy.exercise.rules import rule_after_problem
from viewcopy.locking.file import LockError, read_lock
from viewcopy.locking.record import LockRecord
from viewcopy.notebook import checks

TWENTY = checks.the_twenty(("cpu",))
"""The twenty as classify test cases, on the CPU."""


def numpy_oracle(op_expr: str, parent_expr: str) -> str:
    """'view', 'copy' or 'error' for an op on a CPU parent, decided by NumPy's memory bounds."""
    parent = eval(parent_expr, {"torch": torch})
    try:
        result = eval(op_expr, {"torch": torch, "x": parent})
    except RuntimeError:
        return "error"
    shared = np.shares_memory(result.detach().numpy(), parent.detach().numpy())
    return "view" if shared else "copy"


def in_place_oracle(op_expr: str, parent_expr: str, device: str = "cpu") -> str:
    """view/copy/error by writing the parent in place after taking the result and watching the
    result: NumPy-free, so it works on every device and dtype."""
    with torch.device(device):
        parent = eval(parent_expr, {"torch": torch})
    try:
        result = eval(op_expr, {"torch": torch, "x": parent})
    except RuntimeError:
        return "error"
    before = result.clone()
    with torch.no_grad():
        parent.add_(100)
    return "copy" if torch.equal(result, before) else "view"


def next_pool_oracle() -> dict[str, str]:
    """Each next-ops pool op's verdict by NumPy's memory bounds, which the in-place write must
    confirm (tests/lab/test_next_ops.py and `viewcopy next`'s tests read it)."""
    from viewcopy.exercise.next_ops import POOL

    verdicts = {op.id: numpy_oracle(op.op, op.parent_expr) for op in POOL}
    written = {op.id: in_place_oracle(op.op, op.parent_expr) for op in POOL}
    assert verdicts == written
    return verdicts


def classify_oracle(result: torch.Tensor, parent: torch.Tensor) -> str:
    """view/copy without viewcopy: identity, then NumPy's memory bounds for real CPU memory."""
    if result is parent:
        return "view"
    mine, theirs = result.untyped_storage(), parent.untyped_storage()
    if "meta" in (mine.device.type, theirs.device.type) or 0 in (mine.nbytes(), theirs.nbytes()):
        return "view" if mine is theirs else "copy"
    if result.device != parent.device:
        return "copy"
    shared = np.may_share_memory(result.detach().numpy(), parent.detach().numpy())
    return "view" if shared else "copy"


def student_classify(kind: str):
    """The classify function a synthetic student of this kind hands in."""
    namespace: dict = {}
    exec(classify_source(kind, ROOT), namespace)
    return namespace["classify"]


def expected_credit(classify, cases, points):
    """The classify credit the oracle says `classify` earns on `cases`."""
    right = 0
    for case in cases:
        with torch.device(case.device):
            parent = eval(case.parent, {"torch": torch})
        result = eval(case.op, {"torch": torch, "x": parent})
        with contextlib.suppress(Exception):
            right += classify(result, parent) == classify_oracle(result, parent)
    return round(points * right / len(cases), 4)


def exec_cell(source: str, name: str):
    namespace: dict = {}
    exec(source, namespace)
    return namespace.get(name)


def expected_scores(student: Student, lock: LockRecord | None = None) -> dict[str, float | None]:
    """What each grade cell must hold for this profile, from the policy and measured truth;
    `lock` is its hand-in's lock record, which its next ops are drawn from."""
    cells = student.cells
    predictions_edited = "predictions" in student.edits_after_run
    if not cells:
        predictions_credit = rules_credit = 0.0
    else:
        right = 20 - len(student.wrong_items)
        locked = student.runs and not predictions_edited
        predictions_credit = round(5 * min(right, 16) / 16, 4) if locked else 0.0
        rules = exec_cell(cells["rules_after"], "RULES_AFTER")
        held = next_ops_held(student, lock) if student.wrong_items else {}
        drawn = drawn_families(student, lock) if student.wrong_items else set()
        covered = sum(rule_held(rules.get(i), catalogue.op(i).family, held, drawn)
                      for i in student.wrong_items)  # fmt: skip
        misses = len(student.wrong_items)
        rules_credit = round(2 * covered / misses, 4) if misses else 2.0
        if not locked:  # an unlocked twenty has no locked misses to write rules after for
            rules_credit = 0.0
    expected = {"score_predictions": predictions_credit, "check_rules_after": rules_credit}
    for question in catalogue.QUESTIONS:
        key = f"answer_{question.item}"
        answer = exec_cell(cells[key], f"ANSWER_{question.item}") if key in cells else ""
        expected[key] = None if key in cells else 0.0
        expected[f"specific_{question.item}"] = checks.specificity_credit(
            answer, item=question.item, points=1
        )
    expected["score_next"] = expected_next_credit(student, lock)
    expected["score_production"] = expected_production_credit(student)
    if student.classifier is None:
        expected["test_classify_visible"] = expected["test_classify_hidden"] = 0.0
    else:
        classify = student_classify(student.classifier)
        expected["test_classify_visible"] = expected_credit(classify, TWENTY, 3)
        expected["test_classify_hidden"] = expected_credit(classify, hidden_traps(), 5)
    return expected


def answer_meaning(student: Student, item: int) -> str:
    """What a profile's answer to `item` means, by where the synthetic bank lists its text
    (the template left alone is empty)."""
    source = student.cells.get(f"answer_{item}")
    text = exec_cell(source, f"ANSWER_{item}").strip() if source else ""
    said = {t: m for m, t in SAID_BY_EVERY_CLASS.items()}
    said |= {t: m for m, texts in PARAPHRASES[item].items() for t in texts}
    return said[text] if text else EMPTY


def released_with(student: Student, cell: str) -> bool:
    """Does the release the student downloaded have this answer cell? (0.1.0 had no later
    parts: nbgrader restores their graded cells, which then find nothing to grade.)"""
    release = (student.release / NOTEBOOK) if student.release else RELEASE
    return cell in {grade_id(c) for c in nbformat.read(release, 4).cells}


def production_oracle() -> set[int]:
    """The forward's lines that dispatch any copy kernel, layout or kernel-internal, by running
    each line alone under torch's own profiler (no stacks, no dispatch mode: a path independent
    of viewcopy's tracer)."""
    from torch.autograd.profiler import profile

    from viewcopy.engine.profiling import COPY_KERNELS
    from viewcopy.exercise.production_model import build, forward_listing

    model, images = build("cpu")
    scope = {"self": model, "images": images, "torch": torch}
    copying = set()
    with torch.no_grad():
        for number, code in forward_listing():
            statement = code.replace("return ", "_ = ", 1)
            with profile() as prof:
                exec(statement, scope)
            if {e.name for e in prof.function_events} & (COPY_KERNELS | {"aten::_reshape_copy"}):
                copying.add(number)
    return copying


LAYOUT_CALLS = ("contiguous", "reshape", "flatten", "view", "to")


def layout_oracle() -> set[int]:
    """The forward's lines that ask for a layout copy, by the storage witness alone (no
    profiler): a `.contiguous()`, `.reshape()`, `.flatten()`, `.view()` or `.to()` whose result
    does not share its receiver's storage, or a `@` with an operand that cannot be viewed as a
    batch of matrices (its reshape to three dimensions does not share its storage)."""
    from viewcopy.exercise.production_model import build, forward_listing

    model, images = build("cpu")
    scope = {"self": model, "images": images, "torch": torch}

    def value(node: ast.expr):
        return eval(
            compile(ast.Expression(ast.fix_missing_locations(node)), "<line>", "eval"), scope
        )

    def called_on(receiver: torch.Tensor, call: ast.Call):
        """The call applied to this very receiver (evaluating it again would make another)."""
        scope["_receiver"] = receiver
        func = ast.Attribute(ast.Name("_receiver", ast.Load()), call.func.attr, ast.Load())
        return value(ast.Call(func, call.args, call.keywords))

    def shares(a: torch.Tensor, b: torch.Tensor) -> bool:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()

    copying = set()
    with torch.no_grad():
        for number, code in forward_listing():
            statement = code.replace("return ", "_ = ", 1)
            for node in ast.walk(ast.parse(statement)):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in LAYOUT_CALLS
                    and isinstance(receiver := value(node.func.value), torch.Tensor)
                    and not shares(receiver, called_on(receiver, node))
                ):
                    copying.add(number)
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                    for operand in (value(node.left), value(node.right)):
                        batch = operand.reshape(-1, *operand.shape[-2:])
                        if operand.dim() > 2 and not shares(operand, batch):
                            copying.add(number)
            exec(statement, scope)
    return copying


def expected_production_credit(student: Student, points: float = 2) -> float:
    """score_production for a profile: its PRODUCTION against the oracle, if it ran (locked)."""
    source = student.cells.get("production_predictions")
    if not (student.runs and source) or "production_predictions" in student.edits_after_run:
        return 0.0
    if not released_with(student, "production_predictions"):
        return 0.0
    sheet = ast.literal_eval(source.split("=", 1)[1])
    copying, ungraded = layout_oracle(), production_oracle() - layout_oracle()
    right = sum(
        line in ungraded or (verdict == "copy") == (line in copying)
        for line, verdict in sheet.items()
    )
    return round(points * right / len(sheet), 4)


def rule_held(
    rule: object, family: str, held: dict[str, list[bool]], drawn: Collection[str] | None = ()
) -> float:
    """How far a rule after for a missed item of `family` held: on the locked next ops of its
    family in the draw; nothing where the draw holds that family (`drawn`: its families) but no
    next op of it is locked, or where nothing is drawn (`drawn` None: untested); else, no next op
    of its family drawn, by naming what decides it."""
    if rule_after_problem(rule) is not None or drawn is None:
        return 0.0
    if family in held:
        return sum(held[family]) / len(held[family])
    return 0.0 if family in drawn else 1.0


def drawn_families(student: Student, lock: LockRecord | None) -> set[str] | None:
    """The families of a profile's next ops, drawn from its hand-in's lock of the twenty once
    revealed; None without a revealed lock (nothing drawn)."""
    if lock is None and student.runs:
        raise ValueError(f"{student.student_id} ran the lab: pass its hand-in's lock record")
    return {op.family for op in hand_in_draw(lock)} if lock and lock.revealed_at else None


def next_answers(student: Student, lock: LockRecord | None) -> dict[str, tuple[str, bool]]:
    """A profile's locked next ops: {id: (family, right by NumPy's oracle)}; {} where it locked
    none."""
    if not locks_next_ops(student):
        return {}
    if lock is None:
        raise ValueError(f"{student.student_id} locked next ops: pass its hand-in's lock record")
    on_x = [numpy_oracle(op.expr, catalogue.PARENT_EXPR) for op in catalogue.OPS]
    guess = max(set(on_x), key=on_x.count)
    found = {}
    for op in hand_in_draw(lock):
        truth = numpy_oracle(op.op, op.parent_expr)
        found[op.id] = (op.family, student.next_ops == "rules" or truth == guess)
    return found


def next_ops_held(student: Student, lock: LockRecord | None) -> dict[str, list[bool]]:
    """Per family, whether each of a profile's locked next ops was right."""
    held: dict[str, list[bool]] = {}
    for family, right in next_answers(student, lock).values():
        held.setdefault(family, []).append(right)
    return held


def expected_next_credit(
    student: Student, lock: LockRecord | None = None, points: float = 4
) -> float:
    """score_next for a profile: its draw (from its lock of the twenty) judged by NumPy's oracle;
    a profile that predicts by the rules gets every next op right, whatever its draw."""
    if not locks_next_ops(student):
        return 0.0
    if student.next_ops == "rules":
        return float(points)
    right = sum(hit for _, hit in next_answers(student, lock).values())
    return round(points * min(right, 8) / 8, 4)


def locks_next_ops(student: Student) -> bool:
    """Does the profile lock next ops (it runs, answers them, and its release has them)?"""
    return bool(student.runs and student.cells and student.next_ops) and released_with(
        student, "next_predictions"
    )


def lock_of(course: Path, student_id: str) -> LockRecord | None:
    """The lock record a hand-in in `course` holds (None where it holds none it can read)."""
    try:
        return read_lock(Course.at(course).hand_in(student_id, ASSIGNMENT))
    except LockError:
        return None
