"""WCAG 2.1 AA where a graded hand-in is read: the feedback page a student opens, audited whole, and
formgrader's manual grading page of the same hand-in, whose lab outputs (sanitized, as formgrader
draws them) are audited, by axe-core (pinned; the wcag2a, wcag2aa, wcag21a and wcag21aa rules,
colour contrast computed by Chromium). What axe finds in formgrader's own chrome is printed, not
asserted: docs/accessibility.md lists it with its upstream issues.

Slow (the session's graded course, then a JupyterLab server with formgrader): a few minutes.
"""

from __future__ import annotations

import re

import pytest
from support.chromium import require_chromium, unavailable

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK

pytestmark = [pytest.mark.browser, pytest.mark.course]

require_chromium("VIEWCOPY_REQUIRE_BROWSER")

from playwright.sync_api import expect  # noqa: E402
from support.axe import audit, axe_problem, described  # noqa: E402
from support.browser_lab import artifacts  # noqa: E402
from support.hand_grades import submission_ids  # noqa: E402

if (problem := axe_problem()) is not None:
    unavailable(problem, "VIEWCOPY_REQUIRE_BROWSER")

STUDENT = "fifteen"
"""15/20, a rule for every miss: diagrams, reasons and lost points to show."""
VIEWPORT = {"width": 1400, "height": 1200}
LAB_OUTPUTS = [".output_area"]
"""What the lab output in each cell, as formgrader draws it (the rest of its page is its own)."""


@pytest.fixture(scope="module")
def shots():
    return artifacts("accessibility_pages")


def test_the_feedback_page_a_student_opens_meets_wcag_2_1_aa(browser, cycle, shots):
    course, _ = cycle
    html = course / "feedback" / STUDENT / ASSIGNMENT / NOTEBOOK.replace("ipynb", "html")
    page = browser.new_page(viewport=VIEWPORT)
    page.route(re.compile(r"^https?://"), lambda route: route.abort())  # MathJax's CDN: offline
    page.goto(html.as_uri())
    expect(page.get_by_role("navigation", name="Graded cells")).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text("predictions right")
    found = audit(page, ["html"])
    page.screenshot(path=shots / "feedback.png")
    page.close()
    assert found == [], described(found)


def test_formgrader_shows_the_lab_outputs_at_wcag_2_1_aa_and_says_what_its_chrome_fails(
    browser, formgrader, shots
):
    page = browser.new_page(viewport=VIEWPORT)
    page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
    base = f"http://127.0.0.1:{formgrader.port}"
    page.goto(f"{base}/tree?token={formgrader.token}")  # logged in: formgrader's API needs it
    page.goto(f"{base}/formgrader/submissions/{submission_ids(formgrader.root)[STUDENT]}/")
    expect(page.locator("input#answer_21")).to_have_count(1)
    expect(page.locator(LAB_OUTPUTS[0]).first).to_be_visible()
    found = audit(page, LAB_OUTPUTS)
    chrome = audit(page, ["html"], exclude=LAB_OUTPUTS)
    page.screenshot(path=shots / "formgrader.png")
    page.close()
    print(f"formgrader's own chrome (docs/accessibility.md lists it):\n{described(chrome)}")
    assert found == [], described(found)
