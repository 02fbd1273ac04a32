"""What the browser tests share: the student whose notebook they open, filled in; one Chromium;
one JupyterLab over the students' folders and one with formgrader over the graded course, each
started once for the session (a third kind, test_browser's hostile hand-ins, needs a server per
course: it starts its own)."""

from __future__ import annotations

import nbformat
import pytest
from support.course_notebook import RELEASE
from support.the_class import synthetic_student

from viewcopy.course.assignment import NOTEBOOK
from viewcopy.demo.synthetic import fill


@pytest.fixture(scope="module")
def fifteen():
    """The synthetic student with 15/20 (misses measured, not typed) and a rule for every miss:
    diagrams to show."""
    return synthetic_student("fifteen")


@pytest.fixture(scope="module")
def filled(fifteen):
    """The release notebook with the student's answer cells filled in."""
    notebook = nbformat.read(RELEASE, as_version=4)
    fill(notebook, fifteen.cells)
    return notebook


# The fixtures below import support.browser_lab (Playwright) when first used: a module that skips
# for want of Chromium never reaches them.


@pytest.fixture(scope="session")
def browser(chromium):
    """The session's headless Chromium (tests/conftest.py); every test or module opens its own
    page in it (a page is a browser context of its own: no storage shared)."""
    return chromium


@pytest.fixture(scope="session")
def lab_logs():
    """artifacts/jupyterlab/: the session's JupyterLab servers' logs."""
    from support.browser_lab import artifacts

    return artifacts("jupyterlab")


@pytest.fixture(scope="session")
def student_lab(tmp_path_factory, lab_logs):
    """JupyterLab over a root of students' folders, for the session: each module that acts as a
    student (test_browser, test_accessibility, test_explorer_keyboard) opens its notebook from a
    folder of its own through `student_tab`, so what its kernel writes (the lock file) is its own.
    One server serves them all: same root, same start. The one setting a module needs otherwise
    (test_accessibility: every cell laid out) is its page's, put back when the module ends.

    Not the formgrader servers: formgrader serves the course that is its server's root, and the
    student's folder holds only the notebook (`formgrader`; test_browser's hostile courses)."""
    from support.browser_lab import start_jupyterlab

    root, home = tmp_path_factory.mktemp("students"), tmp_path_factory.mktemp("jupyter")
    server = start_jupyterlab(root, home, lab_logs / "students.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def student_tab(request, browser, student_lab):
    """Opens the module's student tab: `open(notebook, shots, viewport, settings=None)` writes the
    notebook alone into the module's folder (named as `shots`) on `student_lab`, loads it in a
    workspace of its own with the user settings `settings` changes (JupyterLab's, by plugin),
    keeps the page's console in shots/console.log, and waits until its kernel is idle: (the page,
    the folder). When the module ends: the page closed, its kernel shut down, the settings back."""
    from support.browser_lab import KERNEL_MS, keep_console, wait_idle

    def open_tab(notebook, shots, viewport, settings=None):
        folder = student_lab.root / shots.name
        folder.mkdir()
        nbformat.write(notebook, folder / NOTEBOOK)
        if settings:
            student_lab.use_settings(settings)
            request.addfinalizer(student_lab.use_settings)
        page = browser.new_page(viewport=viewport)
        request.addfinalizer(lambda: student_lab.close_notebooks_in(folder))
        request.addfinalizer(page.close)
        keep_console(page, shots / "console.log")
        page.goto(
            student_lab.url(f"{folder.name}/{NOTEBOOK}", workspace=folder.name), timeout=120_000
        )
        wait_idle(page, KERNEL_MS)
        return page, folder

    return open_tab


@pytest.fixture(scope="session")
def formgrader(cycle, tmp_path_factory, lab_logs):
    """JupyterLab with nbgrader's formgrader, for the session, serving a copy of the session's
    graded course with one group's answer_21 graded by hand (support.hand_grades): what
    test_browser checks on the manual grading page and test_accessibility_pages audits."""
    from support.browser_lab import start_jupyterlab
    from support.hand_grades import one_group_graded, writable_copy

    course = writable_copy(cycle[0], tmp_path_factory.mktemp("formgrader") / "course")
    one_group_graded(course)
    server = start_jupyterlab(
        course, tmp_path_factory.mktemp("jupyter"), lab_logs / "formgrader.log"
    )
    yield server
    server.stop()
