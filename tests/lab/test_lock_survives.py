"""Nothing a student locked is undone when the files beside the notebook are lost. A student works
through the whole release in a notebook opened by a real Jupyter server (as JupyterLab opens it:
a session whose kernel the server starts), locking the twenty, the next ops and production; the
notebook is saved with its outputs. Then, as users lose their files:

- JupyterLab, the lock file deleted: the notebook is opened again and every cell run again;
- JupyterLab, the notebook moved to another folder (a laptop to the course hub): the same there;
- a Colab-like kernel in a clean folder (a runtime reset): only the notebook, with its outputs,
  survives, and the kernel gets it from the front end (`google.colab._message`, faked: the one
  part of Colab that cannot be real here).

Each time the lock cell says it restored the lock, the lock record is the one the student made
(its times, its draw of next ops), the filled sheets are accepted, and every graded cell's credit
is what it was. Slow: four runs of the whole notebook and a Jupyter server.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from jupyter_client.asynchronous import AsyncKernelClient
from nbclient import NotebookClient
from support.browser_lab import start_jupyterlab
from support.course_notebook import RELEASE, ROOT
from support.servers import lab_environment

from viewcopy.course.assignment import NOTEBOOK, grade_id
from viewcopy.demo.synthetic import fill, next_predictions_source, synthetic_class
from viewcopy.locking.record import LOCK_FILE
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

pytestmark = [pytest.mark.slow]

NEXT_CELL = "next_predictions"
CREDIT = re.compile(r"^Credit: .*$", re.M)
FAKE_MESSAGE = '''"""A stand-in for google.colab._message: the front end hands over its notebook."""
import json
import os


def blocking_request(request_type, request="", timeout_sec=5, parent=None):
    assert request_type == "get_ipynb", request_type
    with open(os.environ["FAKE_COLAB_NOTEBOOK"], encoding="utf-8") as notebook:
        return {"ipynb": json.load(notebook)}
'''
FAKE_OUTPUT = "def enable_custom_widget_manager():\n    pass\n"
# Colab's kernel has imported google.colab before the first cell runs; so does this one.
SITECUSTOMIZE = "import google.colab\n"


@pytest.fixture(scope="module")
def student():
    return next(s for s in synthetic_class(ROOT) if s.student_id == "rule_learner")


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    """A Jupyter server (JupyterLab's) over a root holding the student's two machines' folders."""
    root, home = tmp_path_factory.mktemp("root"), tmp_path_factory.mktemp("home")
    lab = start_jupyterlab(root, home, home / "jupyterlab.log")
    request.addfinalizer(lab.stop)
    return lab, Path(lab_environment(home)["JUPYTER_RUNTIME_DIR"])


def run_in_session(server, path: str, student=None) -> nbformat.NotebookNode:
    """Open the notebook at `path` in a new session, run every cell as the student does (their
    NEXT_PREDICTIONS written once the next ops are drawn), save it with its outputs, close it."""
    lab, runtime = server
    file = lab.root / path
    notebook = nbformat.read(file, as_version=4)
    session, kernel = lab.open_notebook(path)
    try:
        client = NotebookClient(notebook, timeout=600, allow_errors=True)
        client.kc = AsyncKernelClient()
        client.kc.load_connection_file(runtime / f"kernel-{kernel}.json")
        client.kc.start_channels()
        for index, cell in enumerate(notebook.cells):
            if student is not None and grade_id(cell) == NEXT_CELL:
                cell.source = next_predictions_source(student.next_ops, file.parent)
            client.execute_cell(cell, index)
        client.kc.stop_channels()
    finally:
        lab.close_notebook(session)
    nbformat.write(notebook, file)
    return notebook


def run_colab_like(saved: Path, folder: Path) -> nbformat.NotebookNode:
    """Run every cell of `saved` in a clean `folder` on a kernel that has imported google.colab,
    whose front end hands over `saved` (the notebook as Drive kept it) when asked."""
    fake = folder.parent / "fake_colab"
    (fake / "google" / "colab").mkdir(parents=True)
    (fake / "google" / "__init__.py").write_text("")
    (fake / "google" / "colab" / "__init__.py").write_text("")
    (fake / "google" / "colab" / "_message.py").write_text(FAKE_MESSAGE)
    (fake / "google" / "colab" / "output.py").write_text(FAKE_OUTPUT)
    (fake / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = lab_environment(folder.parent / "colab_home")
    env.pop("JPY_SESSION_NAME", None)
    env.update(PYTHONPATH=str(fake), FAKE_COLAB_NOTEBOOK=str(saved))
    notebook = nbformat.read(saved, as_version=4)
    client = NotebookClient(
        notebook, timeout=600, allow_errors=True, kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
        kernel_manager_class=UnixSocketKernelManager,
    )  # fmt: skip
    client.execute(env=env)
    return notebook


def outputs_text(cell) -> str:
    return "".join(
        o.get("text", "") or o.get("data", {}).get("text/plain", "")
        for o in cell.get("outputs", [])
    )


def graded(notebook) -> dict[str, str]:
    """What every autograded cell shows (its verdicts, its credit, its score), by grade id."""
    return {
        grade_id(c): outputs_text(c)
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }


def errors(notebook) -> dict[str, str]:
    return {
        grade_id(c): o.get("evalue", "")
        for c in notebook.cells
        for o in c.get("outputs", [])
        if o.output_type == "error"
    }


def lock_of(folder: Path) -> dict:
    return json.loads((folder / LOCK_FILE).read_text())


@pytest.fixture(scope="module")
def first(server, student):
    """The student's own run on their laptop, locked to production, then every cell run again with
    nothing lost (as grading runs it: the rules after meet the next ops locked below them): that
    run's notebook and the lock."""
    lab, _ = server
    laptop = lab.root / "laptop"
    laptop.mkdir()
    notebook = nbformat.read(RELEASE, as_version=4)
    fill(notebook, student.cells)
    nbformat.write(notebook, laptop / NOTEBOOK)
    ran = run_in_session(server, f"laptop/{NOTEBOOK}", student)
    locked = lock_of(laptop)
    assert not errors(ran), errors(ran)
    assert {"next", "production"} <= {k for k, v in locked.items() if v}, "locked to production"
    again = run_in_session(server, f"laptop/{NOTEBOOK}")
    assert lock_of(laptop) == locked
    return again, locked


def assert_kept(first, again: nbformat.NotebookNode, lock: dict, source: str) -> None:
    """The lock cell said where it restored the lock from; the lock and every graded cell are as
    they are when nothing was lost."""
    kept, locked = first
    assert not errors(again), errors(again)
    said = outputs_text(next(c for c in again.cells if grade_id(c) == "lock"))
    assert f"{LOCK_FILE} was missing" in said and source in said, said
    assert lock == locked
    shown = graded(kept)
    assert len(CREDIT.findall("".join(shown.values()))) == 3, shown  # the parts that print one
    assert graded(again) == shown


def test_the_lock_file_deleted_in_jupyterlab(server, first):
    lab, _ = server
    (lab.root / "laptop" / LOCK_FILE).unlink()
    again = run_in_session(server, f"laptop/{NOTEBOOK}")
    assert_kept(first, again, lock_of(lab.root / "laptop"), "the notebook's saved file")


def test_the_notebook_moved_to_another_folder_in_jupyterlab(server, first):
    lab, _ = server
    (lab.root / "hub").mkdir()
    shutil.copy(lab.root / "laptop" / NOTEBOOK, lab.root / "hub" / NOTEBOOK)
    again = run_in_session(server, f"hub/{NOTEBOOK}")
    assert_kept(first, again, lock_of(lab.root / "hub"), str(lab.root / "hub" / NOTEBOOK))


def test_a_colab_runtime_reset(server, first, tmp_path):
    lab, _ = server
    drive = tmp_path / "drive" / NOTEBOOK  # the notebook as Drive keeps it, outputs and all
    drive.parent.mkdir()
    shutil.copy(lab.root / "laptop" / NOTEBOOK, drive)
    runtime = tmp_path / "content"
    runtime.mkdir()
    again = run_colab_like(drive, runtime)
    assert_kept(first, again, lock_of(runtime), "Colab's copy of this notebook")
