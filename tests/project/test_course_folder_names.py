"""One value for a course (viewcopy.course.folder.Course): the names of a course folder's entries
are spelled in viewcopy.files.course_layout alone; no other module joins them onto a path, lists
them, tells a folder by them, or spells the hand-in's timestamp file or the grading logs' folder;
and `viewcopy lms push` passes the course on as one value."""

from __future__ import annotations

import ast

from support.course_notebook import ROOT

PACKAGE = ROOT / "src" / "viewcopy"
HOME = PACKAGE / "files" / "course_layout.py"
FOLDERS = {"source", "release", "submitted", "autograded", "feedback", "grade_logs", "lms"}
FILES = {"nbgrader_config.py", "gradebook.db"}
ENTRIES = FOLDERS | FILES
SPELLED_ONCE = {"timestamp.txt", "grade_logs"}


def _strings(node: ast.AST) -> set[str]:
    """The string constants a path join's operand is or holds (f-string parts included)."""
    return {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of every docstring's constant (words, not code)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    found.add(id(statement.value))
    return found


def _names(node: ast.AST) -> set[str]:
    """The course's entry names a collection literal lists."""
    if not isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set()
    return {e.value for e in node.elts if isinstance(e, ast.Constant)} & ENTRIES


def _tells_by_name(node: ast.AST) -> set[str]:
    """The course's entry names a comparison tells a path by (`folder.name == "source"`)."""
    if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute)):
        return set()
    if node.left.attr != "name":
        return set()
    return set().union(*(_strings(c) for c in node.comparators)) & ENTRIES


def _spells(node: ast.AST) -> bool:
    """Whether `node` is a string that spells a name only the course may."""
    value = node.value if isinstance(node, ast.Constant) else None
    return isinstance(value, str) and any(name in value for name in SPELLED_ONCE)


def test_only_the_course_joins_its_folder_names_and_spells_its_files():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        words = _docstrings(tree)
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                if joined := _strings(node.right) & ENTRIES:
                    wrong.append(f"{where}:{node.lineno} joins {sorted(joined)}")
            elif len(listed := _names(node)) > 1:
                wrong.append(f"{where}:{node.lineno} lists {sorted(listed)}")
            elif told := _tells_by_name(node):
                wrong.append(f"{where}:{node.lineno} tells a folder by {sorted(told)}")
            elif _spells(node) and id(node) not in words:
                wrong.append(f"{where}:{node.lineno} spells {node.value!r}")
    fix = "use viewcopy.course.folder.Course or viewcopy.files.course_layout"
    assert wrong == [], fix + ":\n" + "\n".join(wrong)


def test_the_push_passes_the_course_on_as_one_value():
    """`push` and what it calls with the course take a Course, never a folder to rebuild from."""
    from viewcopy.course.folder import Course
    from viewcopy.lms import linked_course, push, scores

    for function in (push.push, linked_course.LinkedCourse.require, scores.assignment_scores):
        assert function.__annotations__["course"] in ("Course", Course), function.__qualname__
    source = (PACKAGE / "lms" / "push.py").read_text(encoding="utf-8")
    assert "Path(course)" not in source and "lms_folder" not in source
