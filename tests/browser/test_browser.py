"""What a student and an instructor see in a real browser: JupyterLab 4 over a filled copy of
the release (the spreadsheet and score, the live explorer widget, a typo named in the page), the
feedback HTML's static diagrams, formgrader's manual grading page of every graded hand-in
(answers, rubrics and checks without sideways scrolling), and a hand-in that tries to script
formgrader and its feedback page (graded by `viewcopy grade` and by plain `nbgrader autograde`).
Headless Chromium through Playwright; screenshots go to artifacts/browser/.

Slow (a JupyterLab server and its kernel, then the session's graded course): a few minutes.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from support.chromium import require_chromium
from support.payloads import STUDENT, img

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    run_nbgrader,
)
from viewcopy.demo.answers import PARAPHRASES, RIGHT
from viewcopy.demo.synthetic import predictions_source
from viewcopy.exercise import catalogue
from viewcopy.locking.record import LOCK_FILE

pytestmark = [pytest.mark.browser, pytest.mark.course]

require_chromium("VIEWCOPY_REQUIRE_BROWSER")

from playwright.sync_api import Error, expect  # noqa: E402
from support.browser_lab import (  # noqa: E402 (after the checks: it imports playwright)
    KERNEL_MS,
    artifacts,
    at,
    cell,
    keep_console,
    output_area,
    replace_source,
    run_all,
    run_cell,
    screenshot,
    start_jupyterlab,
    wait_idle,
)
from support.hand_grades import APPLIED, submission_ids  # noqa: E402

VIEWPORT = {"width": 1400, "height": 1200}


@pytest.fixture(scope="module")
def notebook(filled):
    return filled


@pytest.fixture(scope="module")
def shots():
    return artifacts("browser")


@pytest.fixture(scope="module")
def opened(student_tab, notebook, shots):
    """The notebook open in JupyterLab from the student's folder, which holds only it: (the
    student's tab, the folder)."""
    return student_tab(notebook, shots, VIEWPORT)


@pytest.fixture(scope="module")
def folder(opened):
    return opened[1]


@pytest.fixture(scope="module")
def student(opened, notebook, shots):
    """The student's tab: the notebook open in JupyterLab, then Run > Run All Cells, which stops
    at lock_next: the next ops are drawn only now, so NEXT_PREDICTIONS is still the template."""
    page, _ = opened
    stop = at(notebook, "lock_next")
    try:
        run_all(page, stop, KERNEL_MS)
    except (AssertionError, Error):
        page.screenshot(path=shots / "run-all-failed.png")
        raise
    said = output_area(page, stop).text_content()  # laid out or not (cells off screen are skipped)
    assert "problem" in said and "in NEXT_PREDICTIONS" in said and "missing" in said, said
    return page


def test_the_reveal_shows_twenty_rows_and_the_score(student, notebook, fifteen, shots):
    reveal = output_area(student, at(notebook, "reveal"))
    twenty = len(catalogue.OPS)
    right = twenty - len(fifteen.wrong_items)
    expect(reveal).to_contain_text(f"{right}/{twenty} predicted correctly")
    expect(reveal.locator("table tbody tr")).to_have_count(twenty)
    screenshot(student, cell(student, at(notebook, "reveal")), shots / "spreadsheet.png")


def test_the_explorer_widget_draws_and_redraws_item_20(student, notebook, shots):
    index = at(notebook, "explorer")
    area = output_area(student, index)
    widget = area.locator(".jupyter-widgets.widget-vbox")
    expect(widget).to_be_visible()
    for stuck in ("Error displaying widget", "Loading widget"):
        expect(area).not_to_contain_text(stuck)
    diagram = widget.locator("svg")
    title = diagram.locator('[data-part="title"]')
    expect(diagram).to_be_visible()
    expect(title).to_contain_text("item 1:")
    expect(diagram).not_to_contain_text("stride 0")
    screenshot(student, cell(student, index), shots / "explorer.png")

    expand = catalogue.op(20)
    widget.get_by_label("item", exact=True).select_option(label=f"{expand.item}. {expand.expr}")
    expect(title).to_contain_text("item 20:", timeout=120_000)
    expect(diagram).to_contain_text("stride 0")
    screenshot(student, cell(student, index), shots / "item20.png")


def test_a_typo_is_named_in_the_page_and_nothing_is_locked(
    student, notebook, fifteen, folder, shots
):
    locked = (folder / LOCK_FILE).read_text()
    namespace: dict = {}
    exec(fifteen.cells["predictions"], namespace)
    typo = {**namespace["PREDICTIONS"], 1: ("veiw", namespace["PREDICTIONS"][1][1])}
    replace_source(student, at(notebook, "predictions"), predictions_source(typo))
    run_cell(student, at(notebook, "predictions"))
    run_cell(student, at(notebook, "lock"))

    message = output_area(student, at(notebook, "lock"))
    expect(message).to_contain_text("did you mean 'view'?", timeout=120_000)
    expect(message).to_contain_text("item 1: verdict 'veiw'")
    wait_idle(student, KERNEL_MS)
    assert (folder / LOCK_FILE).read_text() == locked
    screenshot(student, cell(student, at(notebook, "lock")), shots / "error.png")


def test_the_feedback_html_draws_every_missed_item(browser, cycle, shots):
    course, results = cycle
    fifteen = results["fifteen"].student
    html = course / "feedback" / fifteen.student_id / ASSIGNMENT / NOTEBOOK.replace("ipynb", "html")
    assert "BEGIN HIDDEN TESTS" not in html.read_text(encoding="utf-8")

    page = browser.new_page(viewport=VIEWPORT)
    keep_console(page, shots / "console-feedback.log")
    page.route(re.compile(r"^https?://"), lambda route: route.abort())  # MathJax's CDN: offline
    page.goto(html.as_uri())
    expect(page.locator("body")).not_to_contain_text("BEGIN HIDDEN TESTS")
    expect(page.locator("body")).not_to_contain_text("Rubric for the 2 points")
    score = page.locator("div.cell", has=page.locator('a[name="score_predictions"]'))
    diagrams = score.locator("svg", has=page.locator('[data-part="verdict"]'))
    expect(diagrams).to_have_count(len(fifteen.wrong_items))
    titles = diagrams.locator('[data-part="title"]').all_text_contents()
    assert [t.split(":")[0] for t in titles] == [f"item {i}" for i in fifteen.wrong_items]
    for diagram in diagrams.all():
        expect(diagram).to_be_visible()
    score.screenshot(path=shots / "feedback.png")
    page.close()


# --- what the instructor sees: formgrader's manual grading page -------------------------------

FIVE = [f"{kind}_{q.item}" for q in catalogue.QUESTIONS for kind in ("answer", "specific")]
OVERFLOWING = """cell => [cell, ...cell.querySelectorAll('pre, .input_area, .output_subarea')]
    .filter(node => node.scrollWidth > node.clientWidth + 1)
    .map(node => `${node.tagName}.${node.className}: ${node.scrollWidth} > ${node.clientWidth}`)"""


def test_formgrader_shows_every_answer_rubric_and_check_without_sideways_scrolling(
    browser, formgrader, shots
):
    page = browser.new_page(viewport=VIEWPORT)
    keep_console(page, shots / "console-formgrader.log")
    page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
    base = f"http://127.0.0.1:{formgrader.port}"
    page.goto(f"{base}/tree?token={formgrader.token}")  # logged in: formgrader's API needs it
    for student, submission in sorted(submission_ids(formgrader.root).items()):
        page.goto(f"{base}/formgrader/submissions/{submission}/")
        for grade in FIVE:
            graded = page.locator("div.cell", has=page.locator(f"input#{grade}"))
            expect(graded).to_have_count(1)
            assert graded.evaluate(OVERFLOWING) == [], (student, grade)
            if grade.startswith("specific"):
                rubric = graded.get_by_text(f"Rubric for the 2 points of answer_{grade[-2:]}")
                expect(rubric).to_be_visible()
        if student == "perfect":  # graded with its group by `viewcopy five --apply`
            expect(page.locator("input#answer_21")).to_have_value("1.5")
            expect(page.locator("textarea#answer_21-comment")).to_have_value(APPLIED)
        if student == "rule_learner":
            answer = page.locator("div.cell", has=page.locator("input#answer_25"))
            answer.screenshot(path=shots / "formgrader-answer.png")
    # the measure can fail: the answer as it was typed, one line, overflows this very page
    typed = page.locator("div.cell", has=page.locator("input#answer_25"))
    as_typed = f'ANSWER_25 = """{PARAPHRASES[25][RIGHT][2]}"""'
    typed.evaluate("(cell, text) => { cell.querySelector('pre').textContent = text; }", as_typed)
    assert typed.evaluate(OVERFLOWING) != []
    page.close()


# --- a hand-in cannot script the instructor's browser ----------------------------------------

MARKERS = "() => Object.keys(window).filter(name => name.startsWith('pwned_'))"
TINT = "row => getComputedStyle(row.querySelector('td')).backgroundColor"


@pytest.fixture(scope="module")
def injected(hostile, tmp_path_factory):
    """The hostile corpus's course twice, with feedback for the hand-in that scripts the browser:
    as `viewcopy grade` graded it, and graded again by plain `nbgrader autograde`."""
    courses = {}
    for how in ("viewcopy_grade", "nbgrader_autograde"):
        course = tmp_path_factory.mktemp(how) / "course"
        shutil.copytree(hostile[0], course)
        if how == "nbgrader_autograde":
            run_nbgrader(course, "autograde", ASSIGNMENT, "--student", STUDENT, "--force")
        run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--student", STUDENT, "--force")
        courses[how] = course
    return courses


def assert_inert(page, course: Path, requests: list[str]) -> None:
    """No payload ran, none wrote into the course, nothing was fetched from the tracker; the lab's
    tables (the rule as text, rows tinted) and a diagram are shown, the removed script is said."""
    expect(page.get_by_text("My notes on the twenty.")).to_be_visible()
    assert page.evaluate(MARKERS) == []
    assert sorted(p.name for p in course.rglob("pwned_*")) == []
    assert [url for url in requests if "tracker.invalid" in url] == []
    reveal = page.locator("table.viewcopy-table", has_text="actual (cpu)")
    expect(reveal.locator("tbody tr")).to_have_count(len(catalogue.OPS))
    expect(reveal).to_contain_text('<img src=x onerror="window.pwned_rule=1')
    assert reveal.locator("tbody tr").first.evaluate(TINT) == "rgb(216, 243, 220)"
    expect(page.locator("table.viewcopy-table", has_text="pwned_next_rule").first).to_be_visible()
    expect(page.locator("svg", has=page.locator('[data-part="verdict"]')).first).to_be_visible()
    expect(page.get_by_text("application/javascript output removed by the grader")).to_be_visible()


def the_measure_can_fail(page, course: Path | None) -> None:
    """The same payload, put into this very page unsanitized, sets its marker (and, where the page
    holds a Jupyter session, writes into the course)."""
    page.evaluate("markup => document.body.insertAdjacentHTML('beforeend', markup)", img("control"))
    page.wait_for_function("() => window.pwned_control === 1")
    if course is not None:
        written = course / "pwned_control.txt"
        deadline = time.monotonic() + 30

        def content() -> str:
            return written.read_text() if written.exists() else ""

        while content() != "control" and time.monotonic() < deadline:  # the server writes it
            time.sleep(0.2)  # in steps: the file may exist, empty, for a moment
        assert content() == "control"
        written.unlink()


@pytest.mark.parametrize("how", ["viewcopy_grade", "nbgrader_autograde"])
def test_a_hand_in_cannot_script_formgrader_or_its_feedback(
    browser, injected, how, shots, tmp_path_factory
):
    course = injected[how]
    # formgrader serves the course that is its server's root: a server of its own for each course
    server = start_jupyterlab(course, tmp_path_factory.mktemp("jupyter"), shots / f"{how}.log")
    try:
        page = browser.new_page(viewport=VIEWPORT)
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
        base = f"http://127.0.0.1:{server.port}"
        page.goto(f"{base}/tree?token={server.token}")  # logged in, as the instructor is
        page.goto(f"{base}/formgrader/submissions/{submission_ids(course)[STUDENT]}/")
        expect(page.locator("input#answer_21")).to_have_count(1)
        page.wait_for_timeout(2_000)  # time for anything that would run to run
        assert_inert(page, course, requests)
        page.screenshot(path=shots / f"injected-formgrader-{how}.png", full_page=True)
        the_measure_can_fail(page, course)

        feedback = course / "feedback" / STUDENT / ASSIGNMENT / NOTEBOOK.replace("ipynb", "html")
        page.goto(feedback.as_uri())
        page.wait_for_timeout(2_000)
        assert_inert(page, course, requests)
        the_measure_can_fail(page, None)
        page.close()
    finally:
        server.stop()
