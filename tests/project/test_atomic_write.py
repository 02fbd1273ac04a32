"""One helper publishes every file (and link) the package writes whole (viewcopy.files.atomic): two
writers racing on one file leave one of their files whole, never a mix or a torn one, and no
temporary file behind; a writer that fails leaves the old file; and no module publishes a file
by rename its own way."""

from __future__ import annotations

import ast
import os
import threading
from pathlib import Path

import pytest
from support.course_notebook import ROOT

from viewcopy.files.atomic import link_atomically, write_atomically

PACKAGE = ROOT / "src" / "viewcopy"
HOME = PACKAGE / "files" / "atomic.py"


def test_two_writers_racing_leave_one_whole_file_and_nothing_else(tmp_path):
    path = tmp_path / "shared.json"
    contents = {name: (name * 200_000).encode() for name in ("a", "b")}  # 200 kB each
    seen: set[bytes] = set()
    stop = threading.Event()

    def write(name: str) -> None:
        for _ in range(40):
            write_atomically(path, contents[name])

    def read() -> None:
        while not stop.is_set():
            if path.exists():
                seen.add(path.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(name,)) for name in contents]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    stop.set()
    reader.join()
    assert seen and seen <= set(contents.values()), {len(s) for s in seen}
    assert path.read_bytes() in contents.values()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = write_atomically(tmp_path / "a" / "kept.txt", "before")
    assert path.read_text() == "before" and oct(path.stat().st_mode & 0o777) == oct(
        0o666 & ~_umask()
    )

    def refuse(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, "after")
    assert path.read_text() == "before"
    assert [p.name for p in path.parent.iterdir()] == ["kept.txt"]
    monkeypatch.undo()
    assert write_atomically(path, b"x", mode=0o600).stat().st_mode & 0o777 == 0o600


def test_a_link_replaces_what_was_there_whole_and_a_failed_one_keeps_it(tmp_path, monkeypatch):
    name = tmp_path / "kernel-1"
    name.write_text("a stale socket's place")
    assert link_atomically(name, "/proc/1/root/run/one-1") == name
    assert os.readlink(name) == "/proc/1/root/run/one-1"
    link_atomically(name, "/proc/2/root/run/two-1")
    assert os.readlink(name) == "/proc/2/root/run/two-1"

    def refuse(*_):
        raise OSError("read-only")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="read-only"):
        link_atomically(name, "/proc/3/root/run/three-1")
    assert os.readlink(name) == "/proc/2/root/run/two-1"
    assert [p.name for p in tmp_path.iterdir()] == ["kernel-1"]


def _umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def renames(path: Path) -> list[int]:
    """Lines of `path` that publish by rename: `os.replace`, `os.rename`, `Path.replace` or
    `Path.rename` called with one argument."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name, owner = node.func.attr, ast.unparse(node.func.value)
            if name in {"replace", "rename"} and (
                owner == "os"
                or len(node.args) == 1
                and not node.keywords
                and owner not in {"str", "text", "line", "source"}
            ):
                found.append(node.lineno)
    return found


def test_no_module_publishes_a_file_by_rename_its_own_way():
    offenders = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME and (lines := renames(path))
    }
    assert offenders == {}, "publish through viewcopy.files.atomic.write_atomically"
