"""A cell run before the cell that defines a name it uses says which cell to run first."""

from __future__ import annotations

import json

import pytest
from IPython.core.interactiveshell import InteractiveShell

from viewcopy.notebook import undefined


@pytest.fixture
def shell(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    shell = InteractiveShell.instance()
    assert undefined.install()
    yield shell
    shell.set_custom_exc((), None)
    InteractiveShell.clear_instance()


def notebook(tmp_path, monkeypatch, *sources: str) -> None:
    cells = [{"cell_type": "code", "source": s, "outputs": [], "metadata": {}} for s in sources]
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "metadata": {}}))
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))


def test_a_cell_run_before_the_one_defining_its_name_says_which_to_run(
    shell, tmp_path, monkeypatch, capsys
):
    notebook(
        tmp_path, monkeypatch, "import os", "PRODUCTION = {\n    1: 'copy',\n}", "f(PRODUCTION)"
    )
    result = shell.run_cell("len(PRODUCTION)")
    said = capsys.readouterr().out
    assert isinstance(result.error_in_exec, NameError)  # still an error: a graded cell earns 0
    assert "PRODUCTION is not defined in this kernel yet" in said
    assert "run the cell that starts `PRODUCTION = {` first" in said
    assert "Run All Above" in said and "Traceback" not in said


def test_without_the_notebook_it_still_says_what_to_do(shell, monkeypatch, capsys):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    shell.run_cell("NEXT_PREDICTIONS")
    said = capsys.readouterr().out
    assert "run the cell above that defines NEXT_PREDICTIONS first" in said


def test_a_name_error_inside_a_library_keeps_its_traceback(shell, tmp_path, capsys):
    module = tmp_path / "broken_module.py"
    module.write_text("def f():\n    return missing_name\n")
    shell.run_cell(f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import broken_module")
    shell.run_cell("broken_module.f()")
    said = capsys.readouterr().out
    assert "missing_name" in said and "not defined in this kernel yet" not in said


def test_autograde_keeps_the_error_as_it_happened(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    InteractiveShell.instance()
    try:
        assert not undefined.install()  # the feedback shows IPython's own traceback
    finally:
        InteractiveShell.clear_instance()
