"""The explorer: its labelled controls redraw from real measurements, each redraw is announced in
words, and it degrades to static HTML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import ipywidgets
import pytest

import viewcopy
from viewcopy.display.explorer import Explorer, explorer
from viewcopy.engine.devices import available_devices
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_item
from viewcopy.locking.gate import TRUTH_FIRST, TruthFirst

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def svg_of(html: str) -> ET.Element:
    """The one SVG document inlined in a piece of HTML, parsed."""
    start, end = html.index("<svg"), html.index("</svg>") + len("</svg>")
    assert html.count("<svg") == 1
    return ET.fromstring(html[start:end])


def svg_text(html: str) -> str:
    return " ".join("".join(svg_of(html).itertext()).split())


@pytest.fixture(scope="module")
def shown() -> Explorer:
    return Explorer()


def test_the_explorer_draws_nothing_before_the_twenty_are_revealed(workdir, monkeypatch):
    from viewcopy.instructor.master import measured_predictions

    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    right = measured_predictions()
    before = explorer()
    assert isinstance(before, TruthFirst) and repr(before) == TRUTH_FIRST
    viewcopy.lock(right)
    assert isinstance(explorer(), TruthFirst)  # locked, not revealed: re-locking is still open
    viewcopy.reveal(right)
    assert isinstance(explorer(), Explorer)


def test_explorer_is_a_vbox_of_core_widgets(shown):
    assert isinstance(shown, ipywidgets.VBox)
    for child in (shown.item, shown.device, shown.parent, shown.expression):
        assert type(child).__module__.startswith("ipywidgets.")
    assert isinstance(shown.picture, ipywidgets.HTML)
    assert isinstance(shown.status, ipywidgets.HTML)


def test_controls_offer_the_catalogue_and_this_machines_devices(shown):
    assert shown.device.options == available_devices()
    assert shown.parent.options == catalogue.PARENTS
    assert [label for label, _ in shown.item.options] == [
        f"{op.item}. {op.expr}" for op in catalogue.OPS
    ]


def test_it_starts_drawn_on_item_1(shown):
    assert shown.item.value == 1
    assert "\n" not in shown.status.value
    assert catalogue.op(1).expr in svg_text(shown.picture.value)


def test_choosing_item_20_redraws_the_expand(shown):
    shown.expression.value = ""
    shown.item.value = 20
    assert "stride 0" in svg_text(shown.picture.value)
    assert catalogue.op(20).expr in shown.status.value
    shown.item.value = 1


def test_an_invalid_expression_is_one_line_and_keeps_the_text():
    fresh = Explorer()
    before = fresh.picture.value
    fresh.expression.value = "x.("
    assert fresh.expression.value == "x.("
    assert "not a valid Python expression" in fresh.status.value
    assert "\n" not in fresh.status.value and "Traceback" not in fresh.status.value
    assert fresh.picture.value == before


def test_a_typed_expression_overrides_the_item_and_a_variant_is_described():
    fresh = Explorer()
    fresh.expression.value = "x.view(3, 8)"
    assert "x.view(3, 8)" in svg_text(fresh.picture.value)
    assert fresh.status.value.startswith("VIEW")
    fresh.parent.value = "x_colmajor"
    variant = next(v for v in catalogue.VARIANTS if v.name == "x_colmajor")
    assert variant.description in fresh.about.value
    assert fresh.status.value.startswith("ERROR")
    assert "view size is not compatible" in svg_text(fresh.picture.value)
    fresh.expression.value = ""
    assert catalogue.op(1).expr in svg_text(fresh.picture.value)


def test_its_output_carries_the_diagram_for_frontends_without_widgets(shown):
    bundle = shown._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == shown.model_id
    assert shown.picture.value in bundle["text/html"]
    svg_of(bundle["text/html"])


def test_every_control_is_labelled(shown):
    labels = [c.description for c in (shown.item, shown.device, shown.parent, shown.expression)]
    assert labels == ["item", "device", "parent", "expression"]


def said(explorer: Explorer) -> str:
    """The text of the explorer's polite live region."""
    region = ET.fromstring(explorer.said.value)
    assert (region.get("aria-live"), region.get("role")) == ("polite", "status")
    return region.text or ""


def test_a_redraw_announces_the_verdict_and_the_diagrams_text_alternative():
    fresh = Explorer()
    fresh.item.value = 20
    desc = svg_of(fresh.picture.value).find("{http://www.w3.org/2000/svg}desc").text
    verdict = measure_item(20, "x", fresh.device.value).verdict
    expand = catalogue.op(20).expr
    head = f"Diagram of item 20, {expand} on parent x ({fresh.device.value}): {verdict.upper()}."
    assert said(fresh) == f"{head} {desc}"


def test_a_refused_expression_is_announced_and_the_diagram_kept():
    fresh = Explorer()
    before = said(fresh)
    fresh.expression.value = "x.("
    assert "not a valid Python expression" in said(fresh) and said(fresh) != before
    assert "the last one drawn" in said(fresh)
