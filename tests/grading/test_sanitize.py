"""What the instructor sees is sanitized: the allowlist removes every construct that runs script or
loads from elsewhere, keeps the lab's own tables and diagrams as they are, and leaves scores alone.

Active content is judged by tests/support/payloads.py's parser, never by the sanitizer under test.
"""

from __future__ import annotations

import copy
import logging
import subprocess

import nbformat
import pytest
from nbclient import NotebookClient
from nbgrader.utils import determine_grade, is_grade
from support.course_notebook import RELEASE, SOURCE
from support.payloads import (
    TRACKER,
    active_content,
    added_cells,
    img,
    notebook_active_content,
    script,
)

import viewcopy
from viewcopy import notebook as lab
from viewcopy.course.check_record import KEY as RECORD_KEY
from viewcopy.display.cost_figure import cost_bundles
from viewcopy.display.diagram import Diagram
from viewcopy.display.explorer import Explorer
from viewcopy.display.safe_html import is_clean, safe_markdown, sanitize_html
from viewcopy.engine.cost import measure_costs
from viewcopy.exercise.measured import measured_truth
from viewcopy.instructor.master import measured_next_predictions, measured_predictions
from viewcopy.locking.record import OUTPUT_KEY
from viewcopy.plugins.sanitize import SanitizeForInstructor, safe_metadata
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

JS = script("x")
HOSTILE = [
    img("x"),
    f"<script>{JS}</script>",
    f'<svg onload="{JS}"><rect width="1" height="1"/></svg>',
    f"<svg><script>{JS}</script></svg>",
    f'<svg><a href="javascript:{JS}"><text>t</text></a></svg>',
    '<a href="jav&#x61;script:alert(1)">link</a>',
    '<a href=" JAVASCRIPT:alert(1)">link</a>',
    '<a href="data:text/html,<script>alert(1)</script>">link</a>',
    f'<iframe srcdoc="{img("x")}"></iframe>',
    '<form action="javascript:alert(1)"><input></form>',
    '<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">',
    "<style>@import url(https://tracker.invalid/a.css)</style><p>x</p>",
    '<p style="background-image: url(https://tracker.invalid/p.png)">x</p>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="https://tracker.invalid/"><link rel="stylesheet" href="https://tracker.invalid/">',
    f'<math><mtext><table><mglyph><style><img src=x onerror="{JS}">',
    f'<svg><animate onbegin="{JS}" attributeName="x"/></svg>',
    f'<svg><foreignObject><img src=x onerror="{JS}"></foreignObject></svg>',
    f'<details open ontoggle="{JS}"><summary>s</summary></details>',
    f'<img src="{TRACKER}">',
    '<img src="//tracker.invalid/pixel.png">',
    '<svg><image href="https://tracker.invalid/p.png"/></svg>',
    '<svg><rect fill="url(https://tracker.invalid/p.svg#p)" width="1" height="1"/></svg>',
]

PARSER_TRICKS = [
    f'<noscript><p title="</noscript><img src=x onerror={JS}>"></noscript>',
    f"<!--><img src=x onerror={JS}>-->",
]
"""Live in a browser, inert to html.parser (the checker cannot see them before cleaning)."""


@pytest.mark.parametrize("fragment", PARSER_TRICKS)
def test_parser_tricks_come_out_as_text(fragment):
    cleaned = sanitize_html(fragment)
    assert active_content(cleaned) == [] and "onerror" not in cleaned, cleaned


@pytest.mark.parametrize("fragment", HOSTILE)
def test_the_allowlist_removes_what_runs_or_loads(fragment):
    assert active_content(fragment) or "fill=" in fragment  # the checker sees it (it can fail)
    cleaned = sanitize_html(fragment)
    assert active_content(cleaned) == [], cleaned
    assert "url(" not in cleaned and "javascript" not in cleaned.lower(), cleaned


def test_text_survives_as_text():
    cleaned = sanitize_html(f"<p>shares x's storage {img('rule')} &amp; strides</p>")
    assert cleaned.startswith("<p>shares x's storage") and "&amp; strides" in cleaned
    assert active_content(cleaned) == []


def test_every_diagram_and_sheet_the_lab_draws_survives_unchanged(revealed):
    truth = measured_truth(("cpu",))
    for item, item_truth in truth.items():
        for evidence in item_truth.evidence.values():
            markup = Diagram(evidence).html()
            assert is_clean(markup), (item, evidence.parent)
    right = measured_predictions()
    assert is_clean(viewcopy.lock(right)._repr_html_())
    assert is_clean(viewcopy.reveal(right)._repr_html_())
    ops = lab.next_ops()
    sheet = measured_next_predictions(ops)
    first, (verdict, _) = next(iter(sheet.items()))
    opposite = "copy" if verdict == "view" else "view"
    wrong = {**sheet, first: (opposite, "a wrong guess")}  # a miss draws its diagram
    lab.lock_next(wrong)
    revealed_next = lab.reveal_next(wrong)._repr_html_()
    assert "<svg" in revealed_next and is_clean(revealed_next)
    assert is_clean(Explorer(("cpu",)).static_fallback())


ACCESSIBLE = [
    '<div role="region" tabindex="0" aria-label="the twenty" style="overflow-x:auto">t</div>',
    '<svg role="img" aria-labelledby="viewcopy-0a1b2c3d4e5f-title viewcopy-0a1b2c3d4e5f-desc">'
    '<title id="viewcopy-0a1b2c3d4e5f-title">view: x.t()</title>'
    '<desc id="viewcopy-0a1b2c3d4e5f-desc">stride (1, 6)</desc></svg>',
    '<p role="note" aria-describedby="viewcopy-0a1b2c3d4e5f-desc">n</p>',
    '<img src="data:image/png;base64,iVBORw0KGgo=" alt="bars: 6.4 GB/s">',
]
"""What the lab writes to be read by a screen reader or reached by the keyboard: kept as it is."""
MISLEADING = {
    '<div tabindex="5">ahead of the page</div>': "<div>ahead of the page</div>",
    '<div tabindex="-1">out of it</div>': "<div>out of it</div>",
    '<p tabindex="0">not a region</p>': "<p>not a region</p>",
    '<div role="button">a fake control</div>': "<div>a fake control</div>",
    '<svg aria-labelledby="notebook"><title id="notebook">t</title></svg>': (
        "<svg><title>t</title></svg>"
    ),
    '<p aria-describedby="viewcopy-1-desc login">p</p>': "<p>p</p>",
    '<svg><desc id="viewcopy-12-desc" onload="x()">d</desc></svg>': (
        '<svg><desc id="viewcopy-12-desc">d</desc></svg>'
    ),
}
"""A focus order hijacked, a control that is not one, an id or a label taken from the page."""


@pytest.mark.parametrize("fragment", ACCESSIBLE)
def test_what_makes_the_lab_accessible_is_kept(fragment):
    assert is_clean(fragment), sanitize_html(fragment)


@pytest.mark.parametrize("fragment", MISLEADING)
def test_accessibility_attributes_are_kept_only_as_the_lab_writes_them(fragment):
    assert sanitize_html(fragment) == MISLEADING[fragment]


def test_the_cost_table_and_figure_survive_unchanged():
    for bundle in cost_bundles(measure_costs("cpu", shape=(1, 2, 4, 4), repeats=1)):
        assert is_clean(bundle["text/html"])


def test_the_master_and_release_markdown_is_left_as_it_is():
    for path in (SOURCE, RELEASE):
        notebook = nbformat.read(path, as_version=4)
        markdown = [c for c in notebook.cells if c.cell_type == "markdown"]
        assert markdown and all(safe_markdown(c.source) is None for c in markdown), path


def test_a_student_s_markdown_is_kept_when_clean_and_rewritten_when_not():
    benign = "## My rule\n\n| op | verdict |\n|:-|-|\n| `x.t()` | view |\n\n$a<b$ and [docs](https://pytorch.org)"
    assert safe_markdown(benign) is None
    rewritten = safe_markdown(f"My notes on the twenty.\n\n{img('md')}\n\n```python\nx.t()\n```")
    assert rewritten is not None and "\n" not in rewritten
    assert "My notes on the twenty." in rewritten and "shown sanitized" in rewritten
    assert active_content(rewritten) == []
    assert rewritten.startswith("<div")  # an HTML block: Markdown keeps it verbatim


def test_a_markdown_cell_is_judged_with_its_own_attachments_each_time():
    """The grader remembers the Markdown it cleaned (the master's, in every hand-in); a cell's
    attachments are part of what it renders, never taken from a cell with the same source."""
    source = "My sketch:\n\n![strides](attachment:strides.png)"
    png = {"strides.png": {"image/png": "iVBORw0KGgo="}}
    for _ in range(2):
        missing = safe_markdown(source)  # no such attachment: shown as text, sanitized
        assert missing is not None and "attachment:strides.png" in missing
        assert safe_markdown(source, png) is None  # its inline image: clean as it is
    long = f"<p>{'x' * 200_001}</p><script>alert(1)</script>"
    assert sanitize_html(long) == sanitize_html(long) == f"<p>{'x' * 200_001}</p>"


def test_output_metadata_keeps_records_and_numbers_only():
    metadata = {
        RECORD_KEY: {"check": "prediction_credit"},
        OUTPUT_KEY: {"fingerprint": "abc"},
        "image/png": {"width": f"1 onerror={JS}", "height": 20},
        "width": "100 onload=x",
        "filenames": {"image/png": TRACKER},
        "isolated": True,
    }
    assert safe_metadata(metadata) == {
        RECORD_KEY: {"check": "prediction_credit"},
        OUTPUT_KEY: {"fingerprint": "abc"},
        "image/png": {"height": 20},
    }


@pytest.fixture(scope="module")
def hostile_notebook(tmp_path_factory):
    """The release with the hostile cells added, their code run in a real kernel, and each
    graded cell given what a patched check could show: a score beside a script."""
    notebook = nbformat.read(RELEASE, as_version=4)
    cells = added_cells()
    run = nbformat.v4.new_notebook(cells=copy.deepcopy(cells))
    folder = tmp_path_factory.mktemp("kernel")
    NotebookClient(
        run,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": folder}},
        kernel_manager_class=UnixSocketKernelManager,
    ).execute(stderr=subprocess.DEVNULL)
    notebook.cells[1:1] = run.cells
    for cell in notebook.cells:
        if is_grade(cell) and cell.cell_type == "code":
            cell.outputs = [
                nbformat.v4.new_output(
                    "execute_result",
                    {"text/plain": "0.75", "application/javascript": JS},
                    execution_count=1,
                )
            ]
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return notebook


def test_a_hostile_notebook_is_cleaned_everywhere_and_keeps_its_scores(hostile_notebook):
    before = copy.deepcopy(hostile_notebook)
    found = notebook_active_content(before)
    kinds = " ".join(found)
    for expected in ("<img onerror>", "<script>", "<svg onload>", "javascript", "remote", "widget"):
        assert expected in kinds, (expected, found)  # every payload place is seen before

    after, _ = SanitizeForInstructor().preprocess(copy.deepcopy(before), {})
    assert notebook_active_content(after) == []
    log = logging.getLogger("test")
    graded = [(b, a) for b, a in zip(before.cells, after.cells, strict=True) if is_grade(b)]
    assert graded
    for old, new in graded:
        assert determine_grade(new, log) == determine_grade(old, log)
        assert [o.get("data", {}).get("text/plain") for o in new.get("outputs", [])] == [
            o.get("data", {}).get("text/plain") for o in old.get("outputs", [])
        ]
    shown = " ".join(
        str(o.get("data", {}).get("text/html", ""))
        for c in after.cells
        for o in c.get("outputs", [])
    )
    assert "application/javascript output removed by the grader" in shown
    assert "My notes on the twenty." in after.cells[1].source


def test_sanitizing_twice_changes_nothing(hostile_notebook):
    once, _ = SanitizeForInstructor().preprocess(copy.deepcopy(hostile_notebook), {})
    twice, _ = SanitizeForInstructor().preprocess(copy.deepcopy(once), {})
    assert twice.cells == once.cells


def test_grading_warns_when_a_course_leaves_formgrader_unsanitized():
    from support.course_notebook import RELEASE_0_1_0, ROOT

    from viewcopy.course.assignment import course_config
    from viewcopy.plugins.sanitize import unsanitized_views

    assert unsanitized_views(course_config(ROOT)) is None
    warning = unsanitized_views(course_config(RELEASE_0_1_0))  # the config deployed at 0.1.0
    assert "Autograde.autograde_preprocessors and GenerateFeedback.preprocessors" in warning
    assert "SanitizeForInstructor" in warning
