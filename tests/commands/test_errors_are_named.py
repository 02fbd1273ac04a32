"""The `viewcopy` command names each error by what failed: nbgrader's own failure by its command
and output, a course config that does not run by its file and line, and only a measuring
command's unforeseen error as a failed measurement."""

from __future__ import annotations

import shutil

from support.course_notebook import ROOT

from viewcopy.cli import COMMANDS
from viewcopy.engine.command import MEASUREMENT_FAILED

MEASURING = {"key", "probe", "next", "copies", "draw"}


def test_nbgraders_failure_is_named_as_nbgraders(viewcopy, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "source", repo / "source")
    config = (ROOT / "nbgrader_config.py").read_text()
    broken = 'c.GenerateAssignment.preprocessors = ["no_such_module.NoSuchPreprocessor"]\n'
    (repo / "nbgrader_config.py").write_text(f"{config}\n{broken}")
    done = viewcopy("demo", "--repo", str(repo), "--course", str(tmp_path / "course"))
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith("viewcopy demo: nbgrader generate_assignment view_or_copy"), first
    assert "no_such_module" in done.stderr and MEASUREMENT_FAILED not in done.stderr


def test_a_course_config_that_does_not_run_is_named_by_its_line(viewcopy, tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.Execute.timeout = int('x')\n")
    done = viewcopy("grade", "--course", str(tmp_path))
    assert done.returncode == 2
    said = done.stderr.strip()
    assert said.startswith(f"viewcopy grade: error: {tmp_path / 'nbgrader_config.py'}, line 2")
    assert "ValueError" in said and "Traceback" not in done.stderr


def test_only_the_measuring_commands_call_a_failure_a_measurement():
    named = {command.name: command.fails_as for command in COMMANDS}
    assert {n for n, said in named.items() if said == MEASUREMENT_FAILED} == MEASURING
