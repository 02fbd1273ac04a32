"""Shared test oracles and fixtures. The oracles decide view or copy, and what each synthetic
profile must score, without going through viewcopy's measurement: NumPy's memory bounds and
PyTorch itself on the machine running the tests. Test modules import from here, never from
each other."""

from __future__ import annotations

import ast
import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from course_notebook import RELEASE, ROOT, hidden_traps

import viewcopy
from viewcopy.course.assignment import NOTEBOOK, grade_id
from viewcopy.exercise import catalogue
from viewcopy.exercise.next_ops import draw
from viewcopy.exercise.predictions import fingerprint, parse_predictions, rule_problem
from viewcopy.instructor.synthetic import Student, classify_source
from viewcopy.instructor.synthetic_answers import EMPTY, PARAPHRASES, SAID_BY_EVERY_CLASS
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


@pytest.fixture
def revealed(workdir, monkeypatch):
    """A student's folder where the twenty are locked (right, by measurement) and revealed."""
    from viewcopy.instructor.master import measured_predictions

    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    right = measured_predictions()
    viewcopy.lock(right)
    viewcopy.reveal(right)
    return workdir


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


def expected_scores(student: Student) -> dict[str, float | None]:
    """What each grade cell must hold for this profile, from the policy and measured truth."""
    cells = student.cells
    predictions_edited = "predictions" in student.edits_after_run
    if not cells:
        predictions_credit = rules_credit = 0.0
    else:
        right = 20 - len(student.wrong_items)
        locked = student.runs and not predictions_edited
        predictions_credit = round(5 * min(right, 16) / 16, 4) if locked else 0.0
        rules = exec_cell(cells["rules_after"], "RULES_AFTER")
        covered = sum(
            i in rules
            and rule_problem(rules[i]) is None
            and checks.RULE_WORDS.search(rules[i]) is not None
            for i in student.wrong_items
        )
        misses = len(student.wrong_items)
        rules_credit = round(2 * covered / misses, 4) if misses else 2.0
    expected = {"score_predictions": predictions_credit, "check_rules_after": rules_credit}
    for question in catalogue.QUESTIONS:
        key = f"answer_{question.item}"
        answer = exec_cell(cells[key], f"ANSWER_{question.item}") if key in cells else ""
        expected[key] = None if key in cells else 0.0
        expected[f"specific_{question.item}"] = checks.specificity_credit(
            answer, item=question.item, points=1
        )
    expected["score_next"] = expected_next_credit(student)
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


def run_on_course(notebook_path: Path, course: str) -> list:
    """Run an instructor notebook (committed without outputs) with its `COURSE = ...` line set
    to the expression `course`; its outputs, after checking that no cell raised."""
    from nbclient import NotebookClient

    notebook = nbformat.read(notebook_path, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    first = next(c for c in notebook.cells if c.cell_type == "code")
    first.source, replaced = re.subn(r"(?m)^COURSE = .*$", f"COURSE = {course}", first.source)
    assert replaced == 1
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebook_path.parent)}},
    ).execute(stderr=subprocess.DEVNULL)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs


def released_with(student: Student, cell: str) -> bool:
    """Does the release the student downloaded have this answer cell? (0.1.0 had no later
    parts: nbgrader restores their graded cells, which then find nothing to grade.)"""
    release = (student.release / NOTEBOOK) if student.release else RELEASE
    return cell in {grade_id(c) for c in nbformat.read(release, 4).cells}


def production_oracle() -> set[int]:
    """The forward's lines that copy, by running each line alone under torch's own profiler (no
    stacks, no dispatch mode: a path independent of viewcopy's tracer)."""
    from torch.autograd.profiler import profile

    from viewcopy.engine.profiling import COPY_KERNELS
    from viewcopy.exercise.production import build, forward_listing

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


def expected_production_credit(student: Student, points: float = 2) -> float:
    """score_production for a profile: its PRODUCTION against the oracle, if it ran (locked)."""
    source = student.cells.get("production_predictions")
    if not (student.runs and source) or "production_predictions" in student.edits_after_run:
        return 0.0
    if not released_with(student, "production_predictions"):
        return 0.0
    sheet = ast.literal_eval(source.split("=", 1)[1])
    copying = production_oracle()
    right = sum((verdict == "copy") == (line in copying) for line, verdict in sheet.items())
    return round(points * right / len(sheet), 4)


def expected_next_credit(student: Student, points: float = 4) -> float:
    """score_next for a profile: its draw (from its lock of the twenty) judged by NumPy's oracle."""
    if not (student.runs and student.cells and student.next_ops):
        return 0.0
    if not released_with(student, "next_predictions"):
        return 0.0
    sheet = ast.literal_eval(student.cells["predictions"].split("=", 1)[1])
    ops = draw(fingerprint(parse_predictions(sheet)))
    truth = {op.id: numpy_oracle(op.op, op.parent_expr) for op in ops}
    if student.next_ops == "rules":
        right = len(ops)
    else:
        on_x = [numpy_oracle(op.expr, catalogue.PARENT_EXPR) for op in catalogue.OPS]
        guess = max(set(on_x), key=on_x.count)
        right = sum(verdict == guess for verdict in truth.values())
    return round(points * min(right, 8) / 8, 4)


NEEDS_A_COURSE = {"cycle", "hostile"}
"""Session fixtures that build and grade a course: a test using one is marked `course`."""


def pytest_collection_modifyitems(items):
    """The fast subset can never pull in a course: a test on a graded course must say so."""
    unmarked = [
        item.nodeid
        for item in items
        if NEEDS_A_COURSE & set(item.fixturenames) and item.get_closest_marker("course") is None
    ]
    if unmarked:
        raise pytest.UsageError(f"mark these pytest.mark.course (they grade a course): {unmarked}")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A notebook folder as the kernel's working directory, outside autograde."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def cycle(tmp_path_factory):
    """One graded course for the whole session: (course folder, {student_id: Result})."""
    from course_cycle import graded_course

    return graded_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def hostile(tmp_path_factory):
    """The hostile corpus graded once for the session (tests/hostile_corpus.py)."""
    from hostile_corpus import graded_corpus

    sandbox_or_skip(cgroups=True)  # the fork bomb must meet a process limit
    return graded_corpus(tmp_path_factory.mktemp("hostile") / "course")


def sandbox_or_skip(*, cgroups: bool = False) -> None:
    """Skip the calling module where kernels cannot be sandboxed (with `cgroups`: or where the
    sandbox cannot limit cores, processes and memory, which a fork bomb needs); fail it instead
    where VIEWCOPY_REQUIRE_SANDBOX=1 (CI), so the hostile corpus can never silently not run."""
    from viewcopy.plugins.sandbox import Cgroups, Limits, bwrap_problem

    problem = bwrap_problem()
    if problem is None and cgroups:
        limited = Cgroups.enforceable(Limits())
        if not {"pids", "memory", "cpu"} <= limited:
            problem = f"cgroups here limit only {sorted(limited)}"
    if problem is None:
        return
    if os.environ.get("VIEWCOPY_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"{problem}; VIEWCOPY_REQUIRE_SANDBOX=1 requires the sandbox", pytrace=False)
    pytest.skip(f"no sandbox on this machine: {problem}", allow_module_level=True)


# --- the course lock service, as a real process on 127.0.0.1 ---------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_service(data_dir: Path) -> tuple[subprocess.Popen, str]:
    """A real service process on a free port, once it answers its health check."""
    port = free_port()
    code = "from pathlib import Path; from viewcopy.instructor.lock_service import serve; "
    code += f"serve(Path({str(data_dir)!r}), port={port})"
    log = data_dir.parent / f"{data_dir.name}.log"
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=output, stderr=output)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{url}/v1/health", timeout=1).close()
            return process, url
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the lock service did not start on {url}:\n{log.read_text()}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- a real PostgreSQL server for gradebooks, started by the tests ------------------------------


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server programs (Debian's `postgresql` package), if installed."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


class Postgres:
    """A PostgreSQL server in a temporary folder on 127.0.0.1 (run as `postgres` when the tests
    run as root: the server refuses root), with trust authentication for the user `viewcopy`."""

    def __init__(self, bin_dir: Path):
        import pwd
        import tempfile

        self.bin = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="viewcopy-pg-"))
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
        self.data, self.port = self.folder / "data", free_port()
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "viewcopy", "-E", "UTF8")
        options = f"-k {self.folder} -c listen_addresses=127.0.0.1 -p {self.port}"
        log = str(self.folder / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def _run(self, program: str, *args: str) -> None:
        command = [*self.as_user, str(self.bin / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stdout}{done.stderr}")

    def database(self, name: str) -> str:
        """A new, empty database: its SQLAlchemy URL."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "viewcopy", name)
        return f"postgresql+psycopg2://viewcopy@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the session. Skipped where none is installed, except that
    VIEWCOPY_REQUIRE_POSTGRES=1 (CI) fails instead: the PostgreSQL gradebook tests must run."""
    bin_dir = postgres_bin()
    problem = None if bin_dir else "PostgreSQL is not installed (apt-get install postgresql)"
    server = None
    if bin_dir:
        try:
            server = Postgres(bin_dir)
        except (RuntimeError, OSError, KeyError) as exc:
            problem = f"PostgreSQL would not start: {exc}"
    if problem:
        if os.environ.get("VIEWCOPY_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{problem}; VIEWCOPY_REQUIRE_POSTGRES=1 requires it", pytrace=False)
        pytest.skip(problem)
    yield server
    server.stop()
