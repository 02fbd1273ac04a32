"""What starts without torch: the package, the command line and every command that measures
nothing, the plug-in path, and the lock client, which runs in student kernels and needs only the
standard library. Each runs in a fresh Python where importing torch, pandas or matplotlib fails,
so a module that reaches for one of them fails here. How fast they start is
benchmarks/bench_start.py's job, never a test's."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.course_notebook import ROOT
from support.without_heavy import viewcopy_without_heavy, without_heavy

COMMAND_MODULES = sorted(
    f"viewcopy.{path.parent.name}.commands"
    for path in (ROOT / "src" / "viewcopy").glob("*/commands.py")
)
"""Each layer's declared commands: their arguments are read by every `viewcopy --help`."""


@pytest.mark.parametrize(
    "module",
    [
        "viewcopy",
        "viewcopy.cli",
        "viewcopy.plugins",
        "viewcopy.sandbox",
        "viewcopy.sandbox.kernel_manager",
        "viewcopy.grading.grade",
        "viewcopy.five.questions",
        "viewcopy.locking.service",
        "viewcopy.course.handin",
        "viewcopy.locking.flow",
        "viewcopy.locking.judge",
        "viewcopy.exercise.next_ops",
        "viewcopy.exercise.scoring",
        "viewcopy.engine.command",
        *COMMAND_MODULES,
    ],
)
def test_importing_loads_no_torch_pandas_or_matplotlib(module):
    done = without_heavy(f"import {module}")
    assert done.returncode == 0, done.stderr


def test_the_course_config_and_every_plug_in_load_without_torch_pandas_or_matplotlib():
    code = (
        "from pathlib import Path\n"
        "from viewcopy.course.assignment import course_config\n"
        "steps = course_config(Path(sys.argv[1])).Autograde.autograde_preprocessors\n"
        "print(sorted(step.__name__ for step in steps if step.__module__.startswith('viewcopy')))\n"
    )
    done = without_heavy(code, str(ROOT))
    assert done.returncode == 0, done.stderr
    assert "TrustedCredit" in done.stdout and "SanitizeForInstructor" in done.stdout


def test_generate_assignment_checks_a_course_without_own_ops_without_torch():
    """WritePoints, as `nbgrader generate_assignment` runs it on the shipped master: the master
    and the course's declaration checked, its points written; only a course's own next ops are
    measured (torch), and this course declares none."""
    code = (
        "from pathlib import Path\n"
        "import nbformat\n"
        "from viewcopy.course.assignment import course_config\n"
        "from viewcopy.plugins.points import WritePoints\n"
        "root = Path(sys.argv[1])\n"
        "master = nbformat.read(root / 'source/view_or_copy/view_or_copy.ipynb', as_version=4)\n"
        "nb, _ = WritePoints(config=course_config(root)).preprocess(master, {})\n"
        "print(sum('points=' in c.source for c in nb.cells))\n"
    )
    done = without_heavy(code, str(ROOT))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 5  # every check call's points written


def test_the_feedback_table_needs_no_torch_and_the_graders_checks_no_matplotlib():
    """The feedback's table of parts imports neither; a grading worker's checks (its own verdict)
    import torch but draw no figure; the kernel's template imports matplotlib for the cost figure
    (LAB_IMPORTS), once for all its kernels."""
    code = (
        "import sys\n"
        "from viewcopy.display.parts_table import parts_frame\n"
        "parts_frame()\n"
        "print('torch' in sys.modules, 'matplotlib' in sys.modules)\n"
        "import viewcopy.notebook.checks, viewcopy.notebook.context, viewcopy.plugins.trusted\n"
        "print('torch' in sys.modules, 'matplotlib' in sys.modules)\n"
        "from viewcopy.course.assignment import LAB_IMPORTS\n"
        "for module in LAB_IMPORTS: __import__(module)\n"
        "print('matplotlib' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False", "True", "False", "True"], done.stderr


def test_the_lock_client_needs_only_the_standard_library(monkeypatch):
    monkeypatch.setenv("VIEWCOPY_LOCK_SERVICE", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("VIEWCOPY_LOCK_TOKEN", "s1:token")
    code = (
        "before = set(sys.modules)\n"
        "import viewcopy.locking.client as client\n"
        "try:\n"
        "    client.from_environment().lock('view_or_copy', '0' * 64)\n"
        "except client.LockServiceError as exc:\n"
        "    print(isinstance(exc, client.ServiceUnreachable))\n"
        "loaded = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "outside = loaded - set(sys.stdlib_module_names)\n"
        "print(sorted(outside - {'viewcopy', '__main__'}))\n"
    )
    done = without_heavy(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["True", "[]"]


def test_the_stable_names_resolve_lazily_to_their_homes():
    import viewcopy
    import viewcopy.notebook

    assert viewcopy.lock is viewcopy.notebook.lock and viewcopy.reveal is viewcopy.notebook.reveal
    assert set(viewcopy.__all__) <= set(dir(viewcopy))
    for name, home in viewcopy.HOMES.items():
        assert getattr(viewcopy, name) is getattr(sys.modules[home], name), name
    with pytest.raises(AttributeError, match="no attribute 'locks'"):
        viewcopy.locks  # noqa: B018


@pytest.mark.parametrize(
    "args", [["--help"], *([command, "--help"] for command in ("five", "report", "grade", "key"))]
)
def test_help_never_needs_torch(args):
    done = viewcopy_without_heavy(*args)
    assert done.returncode == 0, done.stderr
    assert "usage: viewcopy" in done.stdout


def test_every_commands_help_never_needs_torch():
    """Every command's and every action's help, formatted in one Python without torch."""
    code = (
        "import argparse\n"
        "from viewcopy.cli import build_parser\n"
        "def helps(parser):\n"
        "    yield parser.format_help()\n"
        "    for action in parser._actions:\n"
        "        if isinstance(action, argparse._SubParsersAction):\n"
        "            for sub in action.choices.values():\n"
        "                yield from helps(sub)\n"
        "print(sum(1 for _ in helps(build_parser())))\n"
    )
    done = without_heavy(code)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 14  # viewcopy, its 13 commands and their actions


def test_issuing_a_lock_token_never_needs_torch(tmp_path):
    from viewcopy.locking.service import issue_token

    done = viewcopy_without_heavy("lock-service", "token", "s1", "--data", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == issue_token(tmp_path, "s1")


def test_five_says_what_is_missing_without_torch(tmp_path):
    done = viewcopy_without_heavy("five", "--course", str(tmp_path), "--format", "json")
    assert done.returncode == 2, done.stderr
    assert "no autograded hand-ins of view_or_copy" in done.stderr
    assert "grade first (viewcopy grade)" in done.stderr


def test_the_command_line_starts_without_the_course_packages():
    """`viewcopy copies` and `viewcopy key` work where only the lab is installed: nbgrader is
    imported by what grades, when it grades."""
    probe = (
        "import sys, viewcopy.cli; "
        "print(sorted(m for m in ('nbgrader', 'nh3') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
