"""The release notebook in a Colab-like kernel: a clean environment holding only what Colab
preinstalls that the lab needs (torch, pandas, ipywidgets, numpy, jinja2, and ipykernel to run a
kernel): no viewcopy, no nbgrader, no checkout on its path. The setup cell must install the package
from VIEWCOPY_SOURCE (here a wheel built from this checkout), then a filled notebook must run clean.
Colab's own `google.colab` module is the one part faked (in the last test only).
Slow (a virtual environment and a torch install, about a minute): made once for the module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from support.course_notebook import RELEASE, ROOT

from viewcopy.demo.synthetic import fill, run_cells, synthetic_class
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

pytestmark = [pytest.mark.slow]

TORCH = "torch==2.13.0"  # first, and pinned: a bare torch pulls a CUDA build of several GB
COLAB_PREINSTALLED = ["pandas", "ipywidgets", "numpy", "jinja2", "ipykernel", "matplotlib"]

# Stands in for Colab's google.colab.output, the one part of Colab that cannot be real here.
FAKE_OUTPUT = '''"""A stand-in for google.colab.output: records the call beside this file."""
from pathlib import Path


def enable_custom_widget_manager():
    with Path(__file__).with_name("calls.txt").open("a") as log:
        log.write("enable_custom_widget_manager\\n")
'''
# Colab's kernel has imported google.colab before the first cell runs; so does this launcher.
FAKE_LAUNCHER = """import google.colab
from ipykernel.kernelapp import launch_new_instance

launch_new_instance()
"""


def run(*command: str | Path) -> str:
    """Run a command; its stdout, or a failed test showing the end of its output."""
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def probe(python: Path, code: str) -> str:
    """What `code` prints in `python`, isolated (-I: no PYTHONPATH, user site or current folder)."""
    return run(python, "-I", "-c", code).strip()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The package's wheel, built from a copy of the checkout (nothing is written into it)."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree)
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", tree / "src", ignore=junk)
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", tree, "--no-deps", "--quiet", "-w", out)
    (built,) = out.glob("viewcopy-*.whl")
    return built


@pytest.fixture(scope="module")
def colab_python(tmp_path_factory) -> Path:
    """The Python of a clean virtual environment with only Colab's preinstalled packages."""
    venv = tmp_path_factory.mktemp("colab") / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    # --no-compile: the kernel writes the bytecode of what it imports (compiling all of torch
    # took 30 of the 48 s); the setup cell's own pip compiles as Colab's does
    pip = (python, "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check")
    run(*pip, TORCH)
    run(*pip, *COLAB_PREINSTALLED)
    assert probe(python, "import importlib.util as u; print(u.find_spec('viewcopy'))") == "None"
    return python


def kernel(argv: list[str | Path], folder: Path) -> UnixSocketKernelManager:
    """A kernel manager for a kernelspec written into `folder`, running `argv`."""
    spec = folder / "kernels" / "colab_like"
    spec.mkdir(parents=True)
    document = {
        "argv": [*map(str, argv), "-f", "{connection_file}"],
        "display_name": "Colab-like",
        "language": "python",
    }
    (spec / "kernel.json").write_text(json.dumps(document))
    specs = KernelSpecManager(kernel_dirs=[str(folder / "kernels")])
    return UnixSocketKernelManager(kernel_name="colab_like", kernel_spec_manager=specs)


def execute(notebook, argv: list[str | Path], folder: Path, wheel: Path, student=None) -> None:
    """Run `notebook` in `folder` on a kernel started by `argv`, as `student` would."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION")}
    env["VIEWCOPY_SOURCE"] = str(wheel)
    work = folder / "student"
    work.mkdir()
    client = NotebookClient(
        notebook,
        km=kernel(argv, folder),
        timeout=600,
        resources={"metadata": {"path": str(work)}},
    )
    if student is None:
        client.execute(cleanup_kc=True, env=env)  # shut down: the manager is ours
    else:
        run_cells(client, student, work, env=env)


def outputs(notebook) -> dict[str, list]:
    """Each code cell's outputs, by grade_id."""
    return {
        c.metadata["nbgrader"]["grade_id"]: c.outputs
        for c in notebook.cells
        if c.cell_type == "code"
    }


def text(cell_outputs: list, mime: str = "text/plain") -> str:
    """The streams, and each rich output's `mime` part, as one string."""
    return "".join(o.get("text", "") or o.get("data", {}).get(mime, "") for o in cell_outputs)


@pytest.fixture(scope="module")
def lab_run(colab_python, wheel, tmp_path_factory) -> dict[str, list]:
    """The release, filled with the perfect student's answers, run in the clean kernel."""
    (perfect,) = [s for s in synthetic_class(ROOT) if s.student_id == "perfect"]
    notebook = nbformat.read(RELEASE, as_version=4)
    fill(notebook, perfect.cells)
    launch = [colab_python, "-m", "ipykernel_launcher"]
    execute(notebook, launch, tmp_path_factory.mktemp("run"), wheel, perfect)
    return outputs(notebook)


def test_setup_installs_the_package_from_viewcopy_source(lab_run, colab_python, wheel):
    setup = text(lab_run["setup"])
    assert f"Installing the lab's package from {wheel}" in setup
    assert "torch 2.13.0" in setup and "Colab" not in setup
    where = probe(colab_python, "import viewcopy; print(viewcopy.__file__)")
    assert Path(where).is_relative_to(colab_python.parents[1]), where
    direct_url = probe(
        colab_python,
        "from importlib.metadata import distribution; "
        "print(distribution('viewcopy').read_text('direct_url.json'))",
    )
    assert json.loads(direct_url)["url"] == wheel.as_uri()


def test_the_filled_notebook_runs_with_no_error_and_nothing_on_stderr(lab_run):
    for grade_id, cell_outputs in lab_run.items():
        kinds = [o.output_type for o in cell_outputs]
        assert "error" not in kinds, (grade_id, text(cell_outputs))
        stderr = [o.text for o in cell_outputs if o.get("name") == "stderr"]
        assert not stderr, (grade_id, stderr)


def test_the_reveal_shows_the_twenty_rows_and_the_score(lab_run):
    page = text(lab_run["reveal"], "text/html")
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert len(re.findall(r"<tr\b", body)) == 20
    assert "20/20 predicted correctly" in page
    assert "Credit: 5/5" in text(lab_run["score_predictions"])


def test_the_explorer_draws_a_diagram_and_is_a_live_widget(lab_run):
    (bundle,) = [o.data for o in lab_run["explorer"] if o.output_type == "execute_result"]
    assert "<svg" in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_in_colab_the_setup_enables_the_custom_widget_manager(
    lab_run, colab_python, wheel, tmp_path
):
    # Needs lab_run first: that run must find viewcopy missing; this one finds it installed.
    fake = tmp_path / "fake_colab"
    (fake / "google" / "colab").mkdir(parents=True)
    (fake / "google" / "colab" / "__init__.py").write_text("")
    (fake / "google" / "colab" / "output.py").write_text(FAKE_OUTPUT)
    (fake / "launch.py").write_text(FAKE_LAUNCHER)
    notebook = nbformat.read(RELEASE, as_version=4)
    notebook.cells = [c for c in notebook.cells if c.metadata.nbgrader.grade_id == "setup"]
    execute(notebook, [colab_python, fake / "launch.py"], tmp_path, wheel)
    calls = (fake / "google" / "colab" / "calls.txt").read_text()
    assert calls == "enable_custom_widget_manager\n"
    (setup,) = outputs(notebook).values()
    assert "Colab: custom widget manager enabled" in text(setup)
    assert not [o for o in setup if o.get("name") == "stderr"]
