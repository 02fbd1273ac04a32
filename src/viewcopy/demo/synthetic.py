"""A synthetic class: students with known profiles, who fill the release notebook and run it.

Their predictions are built from measurement on the machine that runs the demo (right ones, or
deliberately wrong ones), never from a typed key. Each student fills answer cells by grade_id,
runs the notebook top to bottom as a student would (which writes the lock), and may edit after.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from viewcopy.course.assignment import (
    ASSIGNMENT,
    LAB_IMPORTS,
    NEXT_PREDICTIONS_CELL,
    NOTEBOOK,
    grade_id,
)
from viewcopy.course.folder import Course, mark_submitted
from viewcopy.demo.answers import (
    EMPTY,
    IT_DEPENDS,
    MISCONCEPTION,
    ONE_WORD,
    RIGHT,
    Voice,
    answer_source,
)
from viewcopy.demo.classifiers import RENAMED_BASE, classify_source
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.next_ops import use_course_ops
from viewcopy.exercise.next_predictions import NEXT, hand_in_draw
from viewcopy.exercise.part import Part
from viewcopy.exercise.predictions import TWENTY
from viewcopy.exercise.production import PRODUCTION
from viewcopy.exercise.production_model import forward_listing
from viewcopy.grading.grade import pool_size
from viewcopy.instructor.master import (
    measured_next_predictions,
    measured_predictions,
)
from viewcopy.locking.file import read_lock
from viewcopy.sandbox.limits import THREADS
from viewcopy.sandbox.own_kernels import OwnKernelManager, OwnKernelTemplate, warm_template
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

OPPOSITE = {"view": "copy", "copy": "view"}
MEMORY = "the same as in the lecture's answers"
"""The memoriser's rule for every one of the twenty: a memory, not a rule of storage."""
SPECIFIC = Voice(RIGHT, 0)
"""The five answered right, in the first words of each meaning."""


def sheet_source(part: Part, sheet: Mapping) -> str:
    """A part's answer cell as a student writes it out: `LABEL = {key: answer, ...}`."""
    lines = [f"    {key!r}: {answer!r}," for key, answer in sheet.items()]
    return f"{part.label} = {{\n" + "\n".join(lines) + "\n}\n"


def predictions_source(predictions: Mapping[int, tuple[str, str]]) -> str:
    return sheet_source(TWENTY, dict(sorted(predictions.items())))


def wrong_on(items: tuple[int, ...], right: Mapping[int, tuple[str, str]], table) -> dict:
    """Right predictions, except the opposite of x's measured verdict on `items`."""
    out = dict(right)
    for item in items:
        out[item] = (OPPOSITE[table[item].reference], "I expected the other layout rule here")
    return out


@dataclass(frozen=True)
class Student:
    """A profile: what the student writes, whether they run it, what they change after (cell
    sources by grade_id, or anything through `tamper`), and which release they downloaded
    (`release`: a folder holding an earlier release's notebook; None: the course's own)."""

    student_id: str
    profile: str
    cells: Mapping[str, str] = field(default_factory=dict)
    runs: bool = True
    edits_after_run: Mapping[str, str] = field(default_factory=dict)
    wrong_items: tuple[int, ...] = ()
    classifier: str | None = None
    tamper: Callable[[nbformat.NotebookNode], None] | None = None
    release: Path | None = None
    next_ops: str | None = None
    """How the student predicts the next ops, once they are drawn: `rules` (their rules of
    storage and strides, which hold), `memorised` (no rule: the twenty's most frequent verdict to
    every op), or None (the template is left as it is)."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """What the student's kernel finds in its environment beyond this process's (a course's lock
    service and the student's token)."""


def answers(voice: Voice) -> dict[str, str]:
    """The five answer cells as a student with this voice fills them."""
    return {
        f"answer_{q.item}": answer_source(q.item, voice.answer(q.item)) for q in catalogue.QUESTIONS
    }


def rules_after(items: tuple[int, ...]) -> str:
    body = "".join(
        f"    {i}: 'check the strides and storage: {catalogue.op(i).expr} decides by them',\n"
        for i in items
    )
    return "RULES_AFTER = {\n" + body + "}\n"


def keyword_rules(items: tuple[int, ...]) -> str:
    """RULES_AFTER with one keyword per missed item: a word, not a rule it can apply."""
    return "RULES_AFTER = {\n" + "".join(f"    {i}: 'strides',\n" for i in items) + "}\n"


def production_by_rules(rules: str = "rules") -> dict[int, str]:
    """Which lines of the forward ask for a layout copy, by the lab's rules alone: a permute or a
    transpose is a view (its result is a permuted tensor); `.contiguous()` of a permuted tensor,
    and a `reshape` of a transposed one, must copy; a matmul packs an operand that is a permuted
    view; a Linear's output and a `.view` of it are new memory computed, not copies. `visible`:
    only the copies one can see on the line (not the matmul's packing)."""
    permuted: set[str] = set()
    sheet = {}
    for number, code in forward_listing():
        target, _, value = code.rpartition(" = ")
        names = set(re.findall(r"[A-Za-z_]\w*", value))
        copies = (
            (".contiguous()" in value and bool(names & permuted))
            or (".transpose(" in value and ".reshape(" in value)
            or (rules == "rules" and "@" in value and bool(names & permuted))
        )
        sheet[number] = "copy" if copies else "no copy"
        targets = {t.strip() for t in target.split(",") if t.strip()}
        if not copies and (".permute(" in value or ".transpose(" in value):
            permuted |= targets
        else:
            permuted -= targets
    return sheet


@dataclass(frozen=True)
class Sheets:
    """What a profile's cells hold: the twenty's measured answers with chosen items wrong, rules
    after, the five in a voice, a classify (`repo`'s master holds the model one), production."""

    repo: Path
    right: Mapping[int, tuple[str, str]]
    table: object

    def predictions(self, wrong: tuple[int, ...] = ()) -> str:
        return predictions_source(wrong_on(wrong, self.right, self.table))

    def filled(self, wrong=(), rules=(), classifier="storage", voice=SPECIFIC, production="rules"):
        return {
            "predictions": self.predictions(wrong),
            "rules_after": rules_after(rules),
            **answers(voice),
            "classify": classify_source(classifier, self.repo),
            "production_predictions": sheet_source(PRODUCTION, production_by_rules(production)),
        }


TYPICAL_WRONG, FIFTEEN_WRONG = (8, 14, 16), (3, 8, 12, 16, 20)


def synthetic_class(repo: Path) -> list[Student]:
    """Twelve profiles: eleven distinct paths through the grading policy, and `renamed`, who hands
    in `fifteen`'s work under other names (the report's similarity list shows the pair; `repo`:
    the course repository, whose master holds the model classify)."""
    sheets = Sheets(repo, measured_predictions(), measured_truth())
    return [*_learners(sheets), *_slips(sheets)]


def _learners(sheets: Sheets) -> list[Student]:
    """The profiles who work the lab through: right, memorised, by rules, by keywords, typical."""
    families = dict.fromkeys(op.family for op in catalogue.OPS)
    keyword_wrong = tuple(next(o.item for o in catalogue.OPS if o.family == f) for f in families)
    filled = sheets.filled
    return [
        Student(
            "perfect",
            "all right, locked, specific answers, correct classify, rules that transfer",
            filled(),
            classifier="storage",
            next_ops="rules",
        ),
        Student(
            "memoriser",
            "all twenty right from memory, but guesses the next ops",
            {
                **filled(voice=Voice(RIGHT, 1)),
                "predictions": predictions_source(measured_predictions(MEMORY)),
            },
            classifier="storage",
            next_ops="memorised",
        ),
        Student(
            "rule_learner",
            "17/20, and applies the rules of storage and strides to the next ops",
            filled(TYPICAL_WRONG, TYPICAL_WRONG, voice=Voice(RIGHT, 2)),
            wrong_items=TYPICAL_WRONG,
            classifier="storage",
            next_ops="rules",
        ),
        Student(
            "keywords",
            "one miss per family, one keyword as the rule after each, and every next op 'view'",
            {
                **filled(keyword_wrong, (), voice=Voice(RIGHT, 2)),
                "rules_after": keyword_rules(keyword_wrong),
            },
            wrong_items=keyword_wrong,
            classifier="storage",
            next_ops="memorised",
        ),
        Student(
            "typical",
            "17/20, rules for 2 of 3 misses, misconceptions and one 'it depends' in the five, "
            "pointer classify",
            filled(
                TYPICAL_WRONG,
                TYPICAL_WRONG[:2],
                "storage_pointer",
                Voice(MISCONCEPTION, 0, ((24, IT_DEPENDS, 0),)),
                "visible",
            ),
            wrong_items=TYPICAL_WRONG,
            classifier="storage_pointer",
        ),
    ]


def _slips(sheets: Sheets) -> list[Student]:
    """The profiles who slip: fewer right, an edit after the lock, never run, a wrong or crashing
    classify, nothing at all."""
    filled = sheets.filled
    fifteen = filled(
        FIFTEEN_WRONG, FIFTEEN_WRONG, "base", Voice(MISCONCEPTION, 1, ((21, ONE_WORD, 0),))
    )
    return [
        Student(
            "fifteen",
            "15/20 with rules for every miss, misconceptions and a one-word answer, _base classify",
            fifteen,
            wrong_items=FIFTEEN_WRONG,
            classifier="base",
        ),
        Student(
            "renamed",
            "fifteen's hand-in again: its classify with every name changed and the functions "
            "reordered, its rules as they were",
            {**fifteen, "classify": RENAMED_BASE},
            wrong_items=FIFTEEN_WRONG,
            classifier="base",
        ),
        Student(
            "edited_after_lock",
            "all right and revealed, then item 5 edited",
            filled(),
            edits_after_run={"predictions": sheets.predictions((5,))},
            wrong_items=(5,),
            classifier="storage",
        ),
        Student(
            "never_locked",
            "all right, but the notebook was never run; one-word answers, one left empty",
            filled(voice=Voice(ONE_WORD, 0, ((22, EMPTY, 0),))),
            runs=False,
            classifier="storage",
        ),
        Student(
            "data_ptr",
            "all right, data_ptr classify, 'it depends' twice",
            filled(
                classifier="data_ptr",
                voice=Voice(RIGHT, 1, ((22, IT_DEPENDS, 0), (24, IT_DEPENDS, 0))),
            ),
            classifier="data_ptr",
        ),
        Student(
            "crashing",
            "all right, classify raises, misconceptions in the five",
            filled(classifier="crash", voice=Voice(MISCONCEPTION, 0)),
            classifier="crash",
        ),
        Student("empty", "handed in the release untouched", {}, runs=False),
    ]


def run_cells(client: NotebookClient, student: Student, folder: Path, **kernel: object) -> None:
    """Run the client's notebook cell by cell in `folder`, as the student does: their
    NEXT_PREDICTIONS are written once the next ops are drawn. `kernel`: how to start it."""
    with client.setup_kernel(cleanup_kc=True, **kernel):  # shut down, even a manager we gave it
        for index, cell in enumerate(client.nb.cells):
            if grade_id(cell) == NEXT_PREDICTIONS_CELL and student.next_ops:
                cell.source = next_predictions_source(student.next_ops, folder)
            client.execute_cell(cell, index)


_MEASURING = threading.Lock()
"""Held while this process measures for a student (torch's profiler is not thread-safe)."""


def next_predictions_source(how: str, folder: Path) -> str:
    """What a student who predicts `how` writes for the next ops drawn for the hand-in in
    `folder` (its lock of the twenty is there, since the reveal ran)."""
    with _MEASURING:
        return _next_predictions_source(how, folder)


def _next_predictions_source(how: str, folder: Path) -> str:
    ops = hand_in_draw(read_lock(folder))
    if how == "rules":
        sheet = measured_next_predictions({op.id: (op.parent_expr, op.op) for op in ops})
    else:
        verdict = Counter(t.reference for t in measured_truth().values()).most_common(1)[0][0]
        sheet = {op.id: (verdict, "most of the twenty were like this") for op in ops}
    return sheet_source(NEXT, sheet)


def fill(notebook: nbformat.NotebookNode, cells: Mapping[str, str]) -> None:
    """Replace the source of the cells whose nbgrader grade_id is named in `cells`."""
    for cell in notebook.cells:
        if grade_id(cell) in cells:
            cell.source = cells[grade_id(cell)]


def write_submission(
    student: Student,
    release: Path,
    folder: Path,
    *,
    timeout: int = 300,
    threads: int | None = None,
    template: OwnKernelTemplate | None = None,
) -> Path:
    """Fill the release notebook into `folder`, run it there as the student would, save it
    (`threads`: torch's thread count in the kernel, unless the environment sets it; `template`:
    where its kernel is forked from, else it starts fresh)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    notebook = nbformat.read((student.release or release) / NOTEBOOK, as_version=4)
    fill(notebook, student.cells)
    if student.runs:
        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(folder)}},
            km=UnixSocketKernelManager(kernel_name="python3")
            if template is None
            else OwnKernelManager(kernel_name="python3", template=template),
        )
        environment = hand_in_environment(student, threads)
        run_cells(client, student, folder, stderr=subprocess.DEVNULL, env=environment)  # log out
    fill(notebook, student.edits_after_run)
    if student.tamper is not None:
        student.tamper(notebook)
    path = folder / NOTEBOOK
    nbformat.write(notebook, path)
    return path


def hand_in_environment(student: Student | None, threads: int | None) -> dict[str, str]:
    """The student's kernel environment: this process's, the student's own, and `threads` for
    torch unless one of those sets it (None: what every student's shares)."""
    environment = {**os.environ, **(student.environment if student else {})}
    for key in THREADS if threads is not None else ():
        environment.setdefault(key, str(threads))
    return environment


def hand_in(
    student: Student,
    course: Path,
    *,
    threads: int | None = None,
    template: OwnKernelTemplate | None = None,
) -> Path:
    """The student's submission of the course's release, stamped as `nbgrader collect` leaves it
    (its kernel forked from `template` where given)."""
    handed = Course.at(course)
    folder = handed.hand_in(student.student_id, ASSIGNMENT)
    use_course_ops(handed.settings.next_ops)  # the draw the release's kernel makes
    release = handed.release / ASSIGNMENT
    write_submission(student, release, folder, threads=threads, template=template)
    mark_submitted(folder)
    return folder


def hand_in_class(
    students: Iterable[Student],
    course: Path,
    *,
    jobs: int | None = None,
    say: Callable[[str], None] | None = None,
) -> list[Path]:
    """Every student's hand-in, `jobs` at a time (default: one per core). Each notebook runs in a
    kernel process of its own, in its own folder, as `hand_in` runs it alone, its torch on its share
    of the cores; the threads here only drive those kernels, and what this process measures for a
    student it measures one at a time. The kernels are forked from one warm template
    (viewcopy.sandbox.own_kernels) where they can be; `say` hears how many were."""
    students = list(students)
    jobs = pool_size(jobs, len(students))
    threads = max(1, (os.cpu_count() or 1) // jobs)  # more kernels than cores only contend
    shared = hand_in_environment(None, threads)
    running = any(s.runs for s in students)  # else no kernel: no template either
    with (
        warm_template(shared, LAB_IMPORTS) if running else nullcontext() as template,
        ThreadPoolExecutor(jobs, thread_name_prefix="hand-in") as pool,
    ):
        handed_in = list(
            pool.map(lambda s: hand_in(s, course, threads=threads, template=template), students)
        )
    if say is not None:
        fresh = f"  kernels: {sum(s.runs for s in students)} started fresh"
        say(fresh if template is None else template.said())
    return handed_in
