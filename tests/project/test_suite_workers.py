"""The suite on two pytest-xdist workers, as scripts/test.sh runs it: every test of a module that
uses the session's class (conftest's `the_class`, `cycle`, `plain`, `hostile`, `built`) lands in
one group, so the class is handed in and graded once; any other module is a group of its own."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from support.course_notebook import ROOT

ON_THE_CLASS = (
    "tests/course/test_similarity.py::"
    "test_the_starter_code_alone_scores_nothing_however_many_hand_it_in"
)
"""A test that needs no course, in a module whose other tests grade the class (selected by -k,
which pytest applies after the groups are drawn from the whole module)."""
ALONE = "tests/project/test_architecture.py::test_every_module_lives_in_a_layer_or_is_a_stable_path"


def xdist_options() -> list[str]:
    """The options scripts/test.sh gives pytest for the whole suite (and the fast subset)."""
    script = (ROOT / "scripts" / "test.sh").read_text()
    found = re.search(r"^WORKERS=\((-n .*)\)$", script, re.M)
    assert found, "scripts/test.sh no longer runs the suite with -n"
    assert script.count('python -m pytest "${WORKERS[@]}"') == 2, script  # the suite, --fast
    return shlex.split(found.group(1))


def module(nodeid: str) -> str:
    return nodeid.split("::")[0]


def name(nodeid: str) -> str:
    return nodeid.split("::")[1]


@pytest.mark.slow
def test_the_workers_get_the_class_modules_as_one_group_and_every_other_module_alone():
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *xdist_options(), "-v", "-p", "no:cacheprovider",
         "-k", f"{name(ON_THE_CLASS)} or {name(ALONE)}", module(ON_THE_CLASS), module(ALONE)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    passed = set(re.findall(r"PASSED (\S+)", run.stdout))
    assert passed == {f"{ON_THE_CLASS}@the_class", f"{ALONE}@{module(ALONE)}"}, run.stdout
