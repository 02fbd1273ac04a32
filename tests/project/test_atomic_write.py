"""One helper publishes every file (and link) the package writes whole (viewcopy.files.atomic): two
writers racing on one file leave one of their files whole, never a mix or a torn one, and no
temporary file behind; a writer that fails leaves the old file; a file written once (a key, a
secret) is never replaced and never readable by more than its mode allows, not for an instant;
no module publishes a file by rename its own way, and every other write of the package is one
of a short list, each with its reason."""

from __future__ import annotations

import ast
import os
import threading
from pathlib import Path

import pytest
from support.course_notebook import ROOT

from viewcopy.files.atomic import link_atomically, write_atomically, write_once

PACKAGE = ROOT / "src" / "viewcopy"
HOME = PACKAGE / "files" / "atomic.py"
DOOR = PACKAGE / "files"


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


def test_a_file_written_once_is_never_replaced_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "made" / "key"
    assert write_once(path, "first\n", mode=0o600) is True
    assert write_once(path, b"second\n", mode=0o644) is False
    assert path.read_bytes() == b"first\n" and path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["key"]


def test_two_writers_racing_to_write_once_leave_the_first_file_whole(tmp_path, monkeypatch):
    """The second writer finds nothing at the first look, then the first writer's file there at
    its link: it gives up, and the first file stays, whole."""
    path = tmp_path / "service_id"
    link = os.link

    def first_writer_got_there_first(source, target, **kwargs):
        monkeypatch.setattr(os, "link", link)
        assert write_once(target, "first", mode=0o600) is True
        return link(source, target, **kwargs)

    monkeypatch.setattr(os, "link", first_writer_got_there_first)
    assert write_once(path, "second", mode=0o600) is False
    assert path.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["service_id"]


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644])
def test_a_file_published_has_its_mode_from_its_first_instant(tmp_path, monkeypatch, umask, mode):
    """What a reader could open at any moment, the temporary file from its creation, while its
    bytes are written and when it is published, has the file's mode, never more: a secret made
    0600 is never readable by others. Its creation and its publication are watched; the umask
    neither opens it nor keeps from it what the mode asks."""
    seen: list[tuple[str, int]] = []
    real_open, real_link, real_replace = os.open, os.link, os.replace

    def mode_of(name: str) -> int:
        return os.stat(name).st_mode & 0o777

    def opening(name, flags, *args, **kwargs):
        descriptor = real_open(name, flags, *args, **kwargs)
        if flags & os.O_CREAT:
            seen.append(("created", os.fstat(descriptor).st_mode & 0o777))
        return descriptor

    def publishing(real):
        def publish(source, target, **kwargs):
            seen.append(("published", mode_of(source)))
            return real(source, target, **kwargs)

        return publish

    monkeypatch.setattr(os, "open", opening)
    monkeypatch.setattr(os, "link", publishing(real_link))
    monkeypatch.setattr(os, "replace", publishing(real_replace))
    before = os.umask(umask)
    try:
        once = write_once(tmp_path / "secret", "s3cret\n", mode=mode)
        replaced = write_atomically(tmp_path / "state.json", "{}\n", mode=mode)
    finally:
        os.umask(before)
    assert once and replaced.read_text() == "{}\n"
    assert [what for what, _ in seen] == ["created", "published"] * 2
    assert all(seen_mode & ~mode == 0 for _, seen_mode in seen), [
        (what, oct(m)) for what, m in seen
    ]
    assert all(m == mode for what, m in seen if what == "published")
    for name in ("secret", "state.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode


# Every write of the package outside files/ that is not a published file, with why. Keys:
# (module under src/viewcopy, the function it is in, the write); a write not listed fails the
# test below, and so does an entry no write matches any more.
NOT_PUBLISHED = {
    ("sandbox/cgroups.py", "Cgroups._make", "write_text"):
        "a cgroup's control files: the kernel's, written in place (no rename there)",
    ("sandbox/kernel_template.py", "_send", "pickle.dump"):
        "what the template's child measured, to the template through a pipe (no file)",
    ("sandbox/kernel_template.py", "_enter_sandbox", "write_text"):
        "cgroup.procs: moving a process into its cgroup is writing its pid in place",
    ("hub/launch.py", "start", "touch"):
        "the hub's log, made owner-only before the hub appends to it",
    ("hub/launch.py", "start", "open('a')"):
        "the hub's log: appended to as the hub runs",
    ("hub/spawner.py", "CourseSpawner.start", "symlink_to"):
        "a grader's ~/<course> link, made only where there is none (nothing to replace)",
    ("grading/worker.py", "serve", "os.open(write)"):
        "a worker's log: appended to by the worker and its kernels",
    ("grading/cluster.py", "ClusterPool._write", "write_text"):
        "one hand-in's grading log, written by the one process grading it, read after the run",
    ("grading/grade.py", "LocalPool._record", "write_text"):
        "one hand-in's grading log, written by the one process grading it, read after the run",
    ("grading/task.py", "unpack", "write_bytes"):
        "into a folder no one reads yet: a worker's private course, or the staged autograded "
        "folder that files.atomic.replace_folder then publishes whole",
    ("grading/remote.py", "Workspace.__init__", "write_bytes"):
        "the config of a worker's private course folder (its own mkdtemp)",
    ("grading/remote.py", "Workspace.grade", "shutil.copy"):
        "a fresh gradebook in a worker's private course folder",
    ("grading/limits.py", "measure_master", "shutil.copytree"):
        "the master copied into a temporary folder, to run it there",
    ("course/assignment.py", "run_nbgrader", "open('a')"):
        "the log of nbgrader's commands: appended to",
    ("course/folder.py", "build_course", "shutil.copy"):
        "a course folder being built, before anyone uses it",
    ("course/folder.py", "build_course", "shutil.copytree"):
        "a course folder being built, before anyone uses it",
    ("course/folder.py", "mark_submitted", "write_text"):
        "a demo or test hand-in's timestamp.txt, in the hand-in folder being built",
    ("course/assignment.py", "gradebook_to_read", "shutil.copy"):
        "the gradebook copied into a temporary folder, to read it without changing it",
    ("lms/journal.py", "Journal._read", "open('r+')"):
        "the append-only journal: a line torn by a crash cut off before the next is appended",
    ("lms/journal.py", "Journal._append", "open('a')"):
        "the append-only journal: one line appended and fsynced per event",
    ("demo/synthetic.py", "write_submission", "nbformat.write"):
        "a demo student's notebook, in the hand-in folder the demo is building",
    ("display/diagram.py", "Diagram.save", "write_text"):
        "the SVG a user asked for at the path they named (viewcopy draw --out)",
    ("display/spreadsheet.py", "Spreadsheet.to_csv", "to_csv"):
        "the CSV a student asked for at the path they named",
    ("display/cost_figure.py", "cost_png", "savefig"):
        "into memory (a BytesIO), not a file",
    ("report/files.py", "_png", "savefig"):
        "into memory (a BytesIO), not a file",
}  # fmt: skip

OS_WRITES = {"link", "rename", "renames", "replace", "symlink", "mkfifo", "mknod", "truncate"}
PATH_WRITES = {"write_text", "write_bytes", "hardlink_to", "symlink_to", "link_to", "touch"}
SHUTIL_WRITES = {"copy", "copy2", "copyfile", "copytree", "move"}
DUMPS = {("json", "dump"), ("pickle", "dump"), ("nbformat", "write"), ("tempfile", "mkstemp")}
DUMPS |= {("tempfile", "NamedTemporaryFile")}
TO_PATH = {"to_csv", "to_json", "to_excel", "to_parquet", "to_pickle", "savefig"}
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")


def _open_mode(node: ast.Call, builtin: bool) -> str | None:
    """The mode string of an `open` call (builtin: its second argument; a path's: its first)."""
    for keyword in node.keywords:
        if keyword.arg == "mode":
            return ast.unparse(keyword.value)
    index = 1 if builtin else 0
    if len(node.args) > index:
        return ast.unparse(node.args[index])
    return None


def _write(node: ast.Call) -> str | None:
    """What `node` writes, as NOT_PUBLISHED names it; None for a call that writes no file."""
    func = node.func
    if isinstance(func, ast.Name) and func.id == "open":
        mode = _open_mode(node, builtin=True)
        writes = mode is not None and (set(mode.strip("'\"")) & set("wax+") or "'" not in mode)
        return f"open({mode})" if writes else None
    if not isinstance(func, ast.Attribute):
        return None
    name, owner = func.attr, ast.unparse(func.value)
    if owner == "os" and name in OS_WRITES:
        return f"os.{name}"
    if owner == "os" and name == "open":
        flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
        return "os.open(write)" if any(flag in flags for flag in WRITE_FLAGS) else None
    if owner == "shutil" and name in SHUTIL_WRITES:
        return f"shutil.{name}"
    if (owner, name) in DUMPS:
        return f"{owner}.{name}"
    if name in PATH_WRITES or name in TO_PATH and node.args:
        return name
    if name in {"replace", "rename"} and (  # as `renames` tells a path's from a string's
        len(node.args) == 1 and not node.keywords and owner not in {"str", "text", "line", "source"}
    ):
        return name
    if name == "open" and owner not in {"c", "canvas", "self"}:  # a path's; an SVG canvas's
        mode = _open_mode(node, builtin=False)
        if mode is not None and set(mode.strip("'\"")) & set("wax+"):
            return f"open({mode})"
    return None


def writes(path: Path) -> list[tuple[str, str, int]]:
    """(the function it is in, the write, its line) for every call of `path` that writes a file:
    os's link, rename, replace and symlink, a path's write_text, write_bytes, rename, replace,
    hardlink_to, symlink_to and touch, open and os.open for writing, shutil's copies and move,
    json.dump, nbformat.write, mkstemp and a table's or a figure's save to a path."""
    found = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{where}.{child.name}" if where else child.name
            if isinstance(child, ast.Call) and (what := _write(child)) is not None:
                found.append((where or "<module>", what, child.lineno))
            visit(child, inner)

    visit(ast.parse(path.read_text()), "")
    return found


def test_the_scan_sees_every_kind_of_write():
    source = """
import json, os, shutil
def f(path, fd, p):
    os.link(a, b); os.replace(a, b); os.rename(a, b); os.symlink(a, b)
    path.write_text("x"); path.write_bytes(b"x"); path.hardlink_to(p); path.replace(p)
    open(p, "w"); open(p, mode="ab"); open(p, "x"); open(p, "r+"); path.open("w")
    os.open(p, os.O_WRONLY | os.O_CREAT, 0o600); shutil.copy(a, b); shutil.move(a, b)
    json.dump({}, fd); frame.to_csv(p)
    open(p); open(p, "rb"); path.open(); os.open(p, os.O_RDONLY); json.dumps({})
    "a".replace("a", "b"); text.replace(p); frame.to_csv()
"""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        module = Path(folder) / "module.py"
        module.write_text(source)
        found = [what for _, what, _ in writes(module)]
    assert found == [
        "os.link", "os.replace", "os.rename", "os.symlink",
        "write_text", "write_bytes", "hardlink_to", "replace",
        "open('w')", "open('ab')", "open('x')", "open('r+')", "open('w')",
        "os.open(write)", "shutil.copy", "shutil.move",
        "json.dump", "to_csv",
    ]  # fmt: skip


def test_every_write_of_the_package_goes_through_files_or_is_listed_with_its_reason():
    unlisted, listed = {}, set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(DOOR):
            continue
        module = str(path.relative_to(PACKAGE))
        for where, what, line in writes(path):
            if (module, where, what) in NOT_PUBLISHED:
                listed.add((module, where, what))
            else:
                unlisted.setdefault(module, []).append(f"{line}: {where}: {what}")
    assert unlisted == {}, (
        "publish through viewcopy.files.atomic (write_atomically; write_once for a file made "
        "once, such as a key or a secret), or list the write in NOT_PUBLISHED with its reason"
    )
    assert set(NOT_PUBLISHED) - listed == set(), "entries no write matches any more"
    assert all(reason.strip() for reason in NOT_PUBLISHED.values())
