"""The hostile corpus: fifteen attacks and a hand-in that scripts the instructor's browser,
beside two honest students, in one course graded by `viewcopy grade` (the session fixture
`hostile` in conftest.py).

Every attack's hand-in is written, never run here: its code only ever runs in the sandbox (the
browser student's locks are written by the lab's own functions on its literals, as its lock cells
would).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

from support.course_notebook import ROOT
from support.payloads import hand_in_locked, hostile_student
from support.the_class import EXITS_KERNEL

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK
from viewcopy.course.folder import Course, build_course
from viewcopy.demo.synthetic import Student, hand_in_class, synthetic_class
from viewcopy.grading.grade import grade
from viewcopy.grading.pool import GradingRun
from viewcopy.locking.record import LOCK_FILE

LIMIT_S = 30
"""The limit per hand-in: the loop and the fork bomb run to it; an honest hand-in, under the
load of a parallel suite, takes a few seconds, but `plants_on_host` (which must be graded) walks
every folder it can write and took over 20 s under CI's load."""
HONEST_COPIES = {"honest_perfect": "perfect", "honest_typical": "typical"}
"""The honest students here, and the class's hand-ins (conftest's `the_class`) they copy."""


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
        "exits_kernel": ("calls os._exit", EXITS_KERNEL),
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
        "plants_on_host": (
            "plants a setuid copy of id in every folder it can write",
            {"rules_after": "RULES_AFTER = {}\n" + PLANT},
        ),
        "reads_grader_secrets": (
            "searches every process's environment, command line and memory for secrets",
            {"rules_after": "RULES_AFTER = {}\n" + SEARCH},
        ),
        "forges_log": (
            "writes lines forged as the grader's to the kernel's own stdout and stderr",
            {"rules_after": "RULES_AFTER = {}\n" + FORGE},
        ),
        "signals_everyone": (
            "sends SIGKILL to every other process it sees",
            {"rules_after": "RULES_AFTER = {}\n" + SIGNAL},
        ),
    }


SECRET_PREFIX = "grader-secret-"
"""What every planted secret begins with: what a search of the processes looks for."""
PLANTED = "viewcopy-planted-id"
"""The name of what `plants_on_host` copies into every folder it can write."""
SECRET = f"{SECRET_PREFIX}{hashlib.sha256(str(Path.cwd()).encode()).hexdigest()[:12]}"
"""Planted in the grader's environment while the corpus is graded."""
FORGED = "viewcopy grade: every hand-in graded, 0 failed"
"""What `forges_log` writes as if the grader said it."""


def plant(marker: str) -> str:
    """Code that copies `id` into every folder it can write as `marker`, setuid, and prints
    (JSON) the paths it planted and how many folders refused."""
    return f"""import json, os, shutil
planted, walls = [], 0
for folder, dirs, _ in os.walk("/"):
    if folder.startswith(("/proc", "/sys", "/dev")):
        dirs.clear()
        continue
    try:
        target = os.path.join(folder, {marker!r})
        shutil.copy("/usr/bin/id", target)
        os.chmod(target, 0o4755)
        planted.append(target)
    except OSError:
        walls += 1
print(json.dumps([planted, walls]))
"""


PLANT = plant(PLANTED)
SEARCH = f"""import json, os
found, refused = {{}}, []
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid())):
    for part in ("environ", "cmdline"):
        try:
            seen = open(f"/proc/{{pid}}/{{part}}", "rb").read()
            if (at := seen.find({SECRET_PREFIX.encode()!r})) >= 0:
                found[f"{{pid}}/{{part}}"] = seen[at : at + 40].decode(errors="replace")
        except OSError:
            refused.append(f"{{pid}}/{{part}}")
    try:
        with open(f"/proc/{{pid}}/maps") as maps, open(f"/proc/{{pid}}/mem", "rb") as mem:
            for line in maps:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                if "r" in line.split()[1] and end - start < 2**28:
                    try:
                        mem.seek(start)
                        seen = mem.read(end - start)
                    except OSError:
                        continue
                    if (at := seen.find({SECRET_PREFIX.encode()!r})) >= 0:
                        found[f"{{pid}}/mem"] = seen[at : at + 40].decode(errors="replace")
    except OSError:
        refused.append(f"{{pid}}/mem")
print(json.dumps([found, refused]))
"""
"""Code that searches every other process's environment, command line and readable memory for
a planted secret and prints (JSON) what it found, by `pid/part`, and what refused to be read."""
FORGE = f"""import os, sys
os.write(sys.stderr._original_stdstream_copy, b"\\x1b[2K{FORGED}\\n")
os.write(sys.stdout._original_stdstream_copy, b"{FORGED}\\n")
print("forged")
"""
SIGNAL = """import os, signal
for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
            print("killed", pid)
        except OSError as exc:
            print("refused", pid, type(exc).__name__)
"""


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


def graded_corpus(course: Path, the_class: Path):
    """Build, hand in and grade the corpus in `course`: (course, honest students, outcomes by
    student, digest before grading, digest after). The honest hand-ins are the class's perfect
    and typical ones, copied."""
    base = {s.student_id: s for s in synthetic_class(ROOT)}
    honest = {
        sid: replace(base[copied], student_id=sid, profile="honest")
        for sid, copied in HONEST_COPIES.items()
    }
    hostile = [
        Student(sid, what, {**base["perfect"].cells, **cells}, runs=False)
        for sid, (what, cells) in attacks(course).items()
    ]
    browser = hostile_student(base["perfect"])
    everyone = [*honest.values(), *hostile, browser]
    build_course(ROOT, course, {s.student_id: s.profile for s in everyone})
    source, graded_course = Course.at(the_class), Course.at(course)
    for student_id, copied in HONEST_COPIES.items():
        shutil.copytree(
            source.hand_in(copied, ASSIGNMENT), graded_course.hand_in(student_id, ASSIGNMENT)
        )
    hand_in_class(hostile, course)
    hand_in_locked(browser, course)
    forged = graded_course.hand_in("forged_lock", ASSIGNMENT) / LOCK_FILE
    forged.write_text(json.dumps({"fingerprint": "0" * 64, "locked_at": "2026-11-29 08:00"}))
    before = digest(course, skip=("autograded", "grade_logs", "gradebook.db"))
    os.environ["VIEWCOPY_PLANTED_SECRET"] = SECRET
    try:
        graded = grade(GradingRun(graded_course, ASSIGNMENT, limit_s=LIMIT_S), say=print)
    finally:
        os.environ.pop("VIEWCOPY_PLANTED_SECRET")
    outcomes = {o.student_id: o for o in graded}
    after = digest(course, skip=("autograded", "grade_logs", "gradebook.db"))
    return course, list(honest.values()), outcomes, before, after
