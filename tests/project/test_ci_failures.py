"""CI names what failed: under a failing version's line the torch matrix prints each failing test
with its assertion (scripts/failures.sh on its log, as .ci/run does for the suite) and the
notebook's last lines. The matrix runs here on a stand-in venv whose pytest runs one small file
that fails, with the matrix's own options."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MATRIX = ROOT / "scripts" / "torch_matrix.sh"
TESTS = """
def test_that_passes():
    assert True


def test_the_sum_holds():
    print("captured noise")
    assert 1 + 1 == 3, "the sum broke on this machine"
"""
PYTHON = """#!/usr/bin/env bash
# A stand-in venv's python: pytest (with the matrix's options) runs {tests} alone; the filled
# notebook crashes; anything else is this Python.
case "$*" in
    "-m pytest "*) exec {python} "$@" {tests} ;;
    *filled_notebook.py) echo "RuntimeError: the kernel died" >&2; exit 1 ;;
    *) exec {python} "$@" ;;
esac
"""


def stand_in_venv(cache: Path, version: str, tests: Path) -> None:
    """A venv the matrix takes as built for `version` (its stamp) with the stand-in python."""
    bin_ = cache / version / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "python").write_text(PYTHON.format(python=sys.executable, tests=tests))
    (bin_ / "python").chmod(0o755)
    (extras,) = re.findall(r"^EXTRAS=(\S+)", MATRIX.read_text(), re.M)
    pyproject = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (cache / version / ".matrix-stamp").write_text(f"{pyproject} {extras} {ROOT}\n")


def failures(log: Path) -> str:
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "failures.sh"), str(log)],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip


def test_a_failing_version_names_each_failing_test_with_its_assertion(tmp_path):
    tests = tmp_path / "test_tiny.py"
    tests.write_text(TESTS)
    stand_in_venv(tmp_path / "cache", "9.9.9", tests)
    run = subprocess.run(
        ["bash", str(MATRIX), "9.9.9"], capture_output=True, text=True, timeout=300,
        env={**os.environ, "TORCH_MATRIX_CACHE": str(tmp_path / "cache")},
    )  # fmt: skip
    line, *under = run.stdout.splitlines()
    assert run.returncode == 1 and ": FAIL | tests: 1 failed, 1 passed" in line, run.stdout
    shown = "\n".join(under)
    assert re.search(r"^ +FAILED \S*::test_the_sum_holds\b", shown, re.M), shown
    assert "E   AssertionError: the sum broke on this machine" in shown
    assert "notebook: crashed" in line and "    RuntimeError: the kernel died" in under
    assert "test_that_passes" not in shown and "captured noise" not in shown


def test_a_log_without_tests_shows_its_last_lines(tmp_path):
    log = tmp_path / "setup.log"
    log.write_text("".join(f"step {n}\n" for n in range(100)) + "ERROR: No matching torch\n")
    shown = failures(log).splitlines()
    assert shown[-1] == "ERROR: No matching torch" and len(shown) == 60


def test_the_torch_floor_lifts_every_requirement_ci_sets_for_the_main_suite():
    """CI requires the browser, sandbox, hub, LMS... tests of the main suite; the floor's venv has
    only the test and course extras, and a module that checks a requirement when collected fails
    there although its tests are deselected (fresh-clone CI failed so on VIEWCOPY_REQUIRE_LTI)."""
    ci = (ROOT / ".ci" / "run").read_text()
    required = set(re.findall(r"^export (VIEWCOPY_REQUIRE_\w+)=1", ci, re.M))
    lifted = set(re.findall(r"-u (VIEWCOPY_REQUIRE_\w+)", MATRIX.read_text()))
    assert required and required <= lifted, required - lifted
