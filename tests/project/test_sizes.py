"""One job a module, one step a function: no source file over 450 lines, no function over 60
(the command line's parser included: each command declares its own arguments), so a file that
grows a second job is split by job before it lands."""

from __future__ import annotations

import ast

from support.course_notebook import ROOT

PACKAGE = ROOT / "src" / "viewcopy"
MOST_LINES, MOST_FUNCTION_LINES = 450, 60


def test_no_source_file_is_over_450_lines():
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}, "split the file by job"


def test_no_function_is_over_60_lines():
    long = {
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}": length
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := node.end_lineno - node.lineno + 1) > MOST_FUNCTION_LINES
    }
    assert long == {}, "split the function by step"
