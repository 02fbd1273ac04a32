"""The session's fixtures and collection rules; the oracles, courses and servers they use live
in tests/support/ (importable as `support.*`: pyproject's pythonpath)."""

from __future__ import annotations

import os
import subprocess

import pytest
from support.sandboxing import sandbox_or_skip
from support.servers import Postgres, postgres_bin, start_service, stop

import viewcopy
from viewcopy.cli import main


@pytest.fixture
def revealed(workdir, monkeypatch):
    """A student's folder where the twenty are locked (right, by measurement) and revealed."""
    from viewcopy.instructor.master import measured_predictions

    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    right = measured_predictions()
    viewcopy.lock(right)
    viewcopy.reveal(right)
    return workdir


NEEDS_A_COURSE = {"the_class", "cycle", "plain", "hostile"}
"""Session fixtures that build and grade a course: a test using one is marked `course`."""


SHARES_THE_CLASS = NEEDS_A_COURSE | {"built"}
"""Fixtures built from the session's class: the modules using them run on one xdist worker."""
HEAVY = ("course", "sandbox", "cluster", "browser", "hub", "slow")
"""Markers of tests that start kernels, servers or browsers: their modules are handed out first."""


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the items' node ids
def pytest_collection_modifyitems(items):
    """The fast subset can never pull in a course: a test on a graded course must say so. Under
    pytest-xdist (scripts/test.sh), each module is one unit of work on one worker (its module
    fixtures are built once), and the modules on the session's class are one unit (the class is
    handed in and graded once); that unit first, then the heavy modules, then the rest."""
    unmarked = [
        item.nodeid
        for item in items
        if NEEDS_A_COURSE & set(item.fixturenames) and item.get_closest_marker("course") is None
    ]
    if unmarked:
        raise pytest.UsageError(f"mark these pytest.mark.course (they grade a course): {unmarked}")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        groups = xdist_groups(items)
        for item, group in groups.items():
            item.add_marker(pytest.mark.xdist_group(group))
        items[:] = groups


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


def xdist_groups(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """Each item's xdist group, the items in the order their groups are handed out: the
    session's class, then heavy modules, then the rest (in collection order within each)."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(_module(item), []).append(item)

    def group(module_items: list[pytest.Item]) -> str:
        if any(SHARES_THE_CLASS & set(item.fixturenames) for item in module_items):
            return "the_class"
        return _module(module_items[0])

    def rank(module_items: list[pytest.Item]) -> int:
        if group(module_items) == "the_class":
            return 0
        heavy = any(item.get_closest_marker(m) for item in module_items for m in HEAVY)
        return 1 if heavy else 2

    ranked = sorted(modules.values(), key=rank)  # stable: collection order within a rank
    return {item: group(module_items) for module_items in ranked for item in module_items}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A notebook folder as the kernel's working directory, outside autograde."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def the_class(tmp_path_factory):
    """The session's synthetic class, handed in once and never graded: tests grade copies
    (tests/support/the_class.py)."""
    from support.the_class import hand_in_the_class

    return hand_in_the_class(tmp_path_factory.mktemp("class") / "course")


@pytest.fixture(scope="session")
def cycle(the_class, tmp_path_factory):
    """The class's profiles through the whole cycle, once: (course folder, {student_id: grades})."""
    from support.the_class import graded_course

    return graded_course(the_class, tmp_path_factory.mktemp("cycle") / "course")


@pytest.fixture(scope="module")
def built(the_class, tmp_path_factory):
    """Three of the session class's hand-ins (support.regrading.KEPT) and its dead kernel's, never
    graded, for one module of cluster tests: each test grades a copy, and compares with the
    session's plain `nbgrader autograde` (`plain`)."""
    from support.regrading import KEPT, KILLS_KERNEL
    from support.the_class import course_of

    return course_of(the_class, tmp_path_factory.mktemp("cluster") / "built", [*KEPT, KILLS_KERNEL])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Dask scheduler and two workers (w0, w1) on 127.0.0.1, shared by one module's tests."""
    from support.regrading import Cluster

    cluster = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        cluster.add_worker("w0")
        cluster.add_worker("w1")
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def plain(the_class, tmp_path_factory):
    """Plain `nbgrader autograde` of the class's COMPARED hand-ins, once: the course folder."""
    from support.the_class import plain_course

    return plain_course(the_class, tmp_path_factory.mktemp("plain") / "course")


@pytest.fixture(scope="session")
def hostile(request, tmp_path_factory):
    """The hostile corpus graded once for the session (tests/support/hostile_corpus.py)."""
    from support.hostile_corpus import graded_corpus

    sandbox_or_skip(cgroups=True)  # the fork bomb must meet a process limit
    the_class = request.getfixturevalue("the_class")
    return graded_corpus(tmp_path_factory.mktemp("hostile") / "course", the_class)


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the session. Skipped where none is installed, except that
    VIEWCOPY_REQUIRE_POSTGRES=1 (CI) fails instead: the PostgreSQL gradebook tests must run."""
    bin_dir = postgres_bin()
    problem = None if bin_dir else "PostgreSQL is not installed (apt-get install postgresql)"
    server = None
    if bin_dir:
        try:
            server = Postgres(bin_dir)
        except (RuntimeError, OSError, KeyError) as exc:
            problem = f"PostgreSQL would not start: {exc}"
    if problem:
        if os.environ.get("VIEWCOPY_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{problem}; VIEWCOPY_REQUIRE_POSTGRES=1 requires it", pytrace=False)
        pytest.skip(problem)
    yield server
    server.stop()


@pytest.fixture(name="viewcopy")
def viewcopy_in_process(capfd):
    """The `viewcopy` command run in this process (fast): stdout, stderr and the exit status."""

    def run(*args: str) -> subprocess.CompletedProcess:
        status = main(list(args))
        out, err = capfd.readouterr()
        return subprocess.CompletedProcess(args, status, out, err)

    return run


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """The course lock service, a real process on 127.0.0.1, for one module: (data folder, URL)."""
    data_dir = tmp_path_factory.mktemp("lock-service")
    process, url = start_service(data_dir)
    yield data_dir, url
    stop(process)


@pytest.fixture(scope="session")
def chromium(request):
    """Headless Chromium for the whole session: the browser tests, the hub's and the LTI
    launch's open their pages in it (one sync Playwright a process: a second one started inside
    the first's event loop fails)."""
    from support.browser_lab import launch_chromium

    return launch_chromium(request)
