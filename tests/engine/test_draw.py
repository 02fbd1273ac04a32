"""Diagrams, checked against torch: every drawn label is what torch's own layout says.

Evidence is built by hand from real tensors, so these tests exercise drawing, not measurement.
"""

from __future__ import annotations

import re
import time
import tracemalloc
import xml.etree.ElementTree as ET

import pytest
import torch
from support.contrast import contrast

from viewcopy.display.diagram import Diagram, render_svg
from viewcopy.display.diagram_style import COLOURS
from viewcopy.engine.evidence import Evidence
from viewcopy.engine.layout import Layout
from viewcopy.engine.measure import measure

YES_NO = {True: "yes", False: "no", None: "not probed"}

SVG = "{http://www.w3.org/2000/svg}"


def make_x() -> torch.Tensor:
    return torch.arange(24, dtype=torch.float32).reshape(4, 6)


def evidence(
    op: str,
    parent: torch.Tensor,
    result: torch.Tensor | None,
    verdict: str = "view",
    **fields: object,
) -> Evidence:
    return Evidence(
        op=op,
        parent="x",
        device="cpu",
        verdict=verdict,
        parent_layout=Layout.of(parent),
        result_layout=None if result is None else Layout.of(result),
        **fields,
    )


def part(root: ET.Element, name: str) -> ET.Element:
    found = [e for e in root.iter() if e.get("data-part") == name]
    assert len(found) == 1, f"expected one data-part={name!r}, found {len(found)}"
    return found[0]


def cells(group: ET.Element) -> dict[tuple[int, ...], ET.Element]:
    """The drawn grid cells of one tensor, by logical index."""
    return {
        tuple(int(i) for i in cell.get("data-index").split(",") if i): cell
        for cell in group.iter(f"{SVG}g")
        if cell.get("class") == "cell"
    }


def slots(group: ET.Element) -> dict[int, ET.Element]:
    return {
        int(s.get("data-storage")): s for s in group.iter(f"{SVG}g") if s.get("class") == "slot"
    }


def text(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def storage_oracle(tensor: torch.Tensor) -> torch.Tensor:
    """Torch's own answer to 'which storage element does each cell read', for any layout."""
    numel = tensor.untyped_storage().nbytes() // tensor.element_size()
    return torch.arange(numel).as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def check_labels(group: ET.Element, tensor: torch.Tensor) -> dict[tuple[int, ...], ET.Element]:
    drawn = cells(group)
    oracle = storage_oracle(tensor)
    for index, cell in drawn.items():
        expected = int(oracle[index])
        assert int(cell.get("data-storage")) == expected, index
        assert text(cell) == str(expected), index
    return drawn


VIEWS = [
    "x.t()",
    "x[1:]",
    "x[:, ::2]",
    "x[::2, 1:]",
    "x.unfold(1, 2, 2)",
    "x.diagonal()",
    "x.unsqueeze(0).expand(3, 4, 6)",
    "x[2, 3]",
    "x[1]",
    "x.view(2, 3, 4)",
]


@pytest.mark.parametrize("op", VIEWS)
def test_every_cell_is_labelled_with_the_storage_element_torch_reads(op):
    x = make_x()
    result = eval(op, {"x": x, "torch": torch})
    root = ET.fromstring(render_svg(evidence(op, x, result)))
    drawn = check_labels(part(root, "result"), result)
    assert len(drawn) == result.numel()  # small enough: nothing elided
    for index, cell in drawn.items():
        # x is arange, so for a view the value torch reads is the storage index itself
        assert text(cell) == str(int(result[index].item()))
    assert len(check_labels(part(root, "parent"), x)) == 24


def test_transpose_reaches_every_parent_element_once_on_one_shared_strip():
    x = make_x()
    root = ET.fromstring(render_svg(evidence("x.t()", x, x.t())))
    strip = slots(part(root, "storage"))
    assert sorted(strip) == list(range(24))
    assert {(s.get("data-parent"), s.get("data-result")) for s in strip.values()} == {("1", "1")}
    assert text(part(root, "verdict")) == "VIEW"
    assert "stride (1, 6)" in text(part(root, "result"))
    assert "contiguous: no" in text(part(root, "result"))
    assert not [e for e in root.iter() if e.get("data-part") == "new-storage"]


def test_a_slice_reaches_only_its_own_elements():
    x = make_x()
    result = x[1:, ::3]
    root = ET.fromstring(render_svg(evidence("x[1:, ::3]", x, result)))
    reached = {k for k, s in slots(part(root, "storage")).items() if s.get("data-result") != "0"}
    assert reached == set(storage_oracle(result).flatten().tolist())
    assert "storage_offset 6" in text(part(root, "result"))


def test_expand_shows_stride_0_panels_and_multiplicity():
    x = make_x()
    result = x.unsqueeze(0).expand(1000, 4, 6)
    root = ET.fromstring(render_svg(evidence("expand", x, result), max_panels=4))
    group = part(root, "result")
    drawn = check_labels(group, result)
    assert {index[0] for index in drawn} == {0, 1, 998, 999}
    assert "stride 0" in text(group)
    assert any(e.get("class") == "ellipsis" for e in group.iter())
    counts = torch.bincount(storage_oracle(result).flatten(), minlength=24)
    strip = slots(part(root, "storage"))
    assert {k: int(s.get("data-result")) for k, s in strip.items()} == dict(
        enumerate(counts.tolist())
    )
    assert "×1000" in text(part(root, "storage"))


def test_big_contiguous_tensor_is_elided_within_budget():
    big = torch.empty(100, 100)
    result = big[::3, 1:]
    root = ET.fromstring(
        render_svg(evidence("big[::3, 1:]", big, result), max_rows=8, max_cols=12, max_strip=48)
    )
    drawn = check_labels(part(root, "result"), result)
    assert len(drawn) == 8 * 12
    assert {i for i, _ in drawn} == {0, 1, 2, 3, 30, 31, 32, 33}
    storage = part(root, "storage")
    assert len(slots(storage)) == 48
    caption = text(part(storage, "caption"))
    assert "48 of 10000 elements shown" in caption
    assert "highlights from drawn cells" in caption
    distinct = len(set(storage_oracle(result).flatten().tolist()))
    assert f"reads {distinct} of the parent's {big.numel()} storage elements" in desc(root)


def one_byte_expanded() -> list[tuple[torch.Tensor, torch.Tensor]]:
    one = torch.zeros(1, dtype=torch.uint8)
    return [
        (one, one.expand(2**32)),
        (one, one.view(1, 1).expand(2**16, 2**16)),
        (one, one.view(1, 1, 1).expand(2**10, 2**11, 2**11)),
    ]


@pytest.mark.parametrize("parent, result", one_byte_expanded(), ids=["1d", "2d", "3d"])
def test_a_one_byte_tensor_expanded_to_4_gib_draws_like_x(parent, result):
    x = make_x()
    small = evidence("x.t()", x, x.t())
    huge = evidence("expand", parent, result)

    def best_of_three(e: Evidence) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            render_svg(e)
            times.append(time.perf_counter() - start)
        return min(times)

    assert best_of_three(huge) < 50 * best_of_three(small)
    tracemalloc.start()
    try:
        svg = render_svg(huge)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20
    root = ET.fromstring(svg)
    group = part(root, "result")
    assert len(check_labels(group, result)) <= 4 * 8 * 12
    assert "stride 0" in text(group)
    assert "4294967296 bytes" in text(group)
    assert any(e.get("class") == "ellipsis" for e in group.iter())
    (slot,) = slots(part(root, "storage")).values()
    assert slot.get("data-result") == str(result.numel())
    assert f"×{result.numel()}" in text(slot)
    assert f"each {result.numel()} times" in desc(root)


def test_a_copy_gets_a_new_strip_sized_from_the_evidence():
    x = make_x()
    result = x.t().contiguous()
    root = ET.fromstring(
        render_svg(evidence("x.t().contiguous()", x, result, "copy", bytes_allocated=512))
    )
    assert text(part(root, "verdict")) == "COPY"
    new = part(root, "new-storage")
    assert "new storage: 512 bytes (measured allocation)" in text(part(new, "caption"))
    assert set(slots(new)) == set(range(24))
    assert {s.get("data-result") for s in slots(new).values()} == {"1"}
    assert all(s.get("data-result") is None for s in slots(part(root, "storage")).values())
    check_labels(part(root, "result"), result)


def test_a_copy_without_a_measured_allocation_says_so():
    x = make_x()
    result = x[[0, 2]]
    root = ET.fromstring(render_svg(evidence("x[[0, 2]]", x, result, "copy")))
    caption = text(part(part(root, "new-storage"), "caption"))
    expected = result.untyped_storage().nbytes()
    assert f"new storage: {expected} bytes (size of the result's storage)" in caption


def test_a_dtype_view_gets_a_strip_in_its_own_elements():
    x = make_x()
    result = x.view(torch.uint8)
    root = ET.fromstring(render_svg(evidence("x.view(torch.uint8)", x, result)))
    retyped = part(root, "retyped-storage")
    assert "read as uint8" in text(part(retyped, "caption"))
    assert {s.get("data-result") for s in slots(retyped).values()} == {"1"}
    check_labels(part(root, "result"), result)


def test_an_error_draws_the_parent_and_pytorchs_message():
    colmajor = make_x().t().contiguous().t()
    with pytest.raises(RuntimeError) as refused:
        colmajor.view(3, 8)
    message = str(refused.value)
    root = ET.fromstring(
        render_svg(evidence("x.view(3, 8)", colmajor, None, "error", message=message))
    )
    lines = [text(line) for line in part(root, "message").iter(f"{SVG}tspan")]
    assert " ".join(lines) == " ".join(message.split())
    assert part(root, "verdict").get("data-verdict") == "error"
    assert text(part(root, "verdict")) == "ERROR"
    assert len(check_labels(part(root, "parent"), colmajor)) == 24
    assert not [e for e in root.iter() if e.get("data-part") == "result"]


def test_text_is_escaped_into_valid_xml():
    x = make_x()
    op = 'x[x > 3] & "quoted" <tag>\x07'
    root = ET.fromstring(render_svg(evidence(op, x, x[x > 3], "copy")))
    assert 'x[x > 3] & "quoted" <tag>' in text(part(root, "title"))


def test_diagram_embeds_the_svg_inline_and_saves_it(tmp_path):
    x = make_x()
    diagram = Diagram(evidence("x.t()", x, x.t()))
    html = diagram._repr_html_()
    assert html.startswith("<div") and diagram.svg in html
    assert diagram.svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    saved = diagram.save(tmp_path / "x_t.svg")
    assert ET.parse(saved).getroot().tag == f"{SVG}svg"


# --- what the diagram says in words, and what a student must see ------------------------------

POSITIONS = re.compile(r"(\d+)(?: to (\d+)(?: in steps of (\d+))?)?")


def desc(root: ET.Element) -> str:
    return text(root.find(f"{SVG}desc"))


def said_positions(words: str) -> set[int]:
    """The storage elements a <desc> says the result reads (`a`, `a to b`, `in steps of k`)."""
    listed = re.search(r"storage elements[^:]*: ([^.]*)\.", words).group(1)
    out: set[int] = set()
    for start, stop, step in POSITIONS.findall(listed):
        out |= set(range(int(start), int(stop or start) + 1, int(step or 1)))
    return out


def layout_words(role: str, name: str, tensor: torch.Tensor) -> str:
    return (
        f"{role} {name}: shape {tuple(tensor.shape)}, stride {tuple(tensor.stride())}, "
        f"storage offset {tensor.storage_offset()}"
    )


@pytest.mark.parametrize("op", VIEWS)
def test_the_text_alternative_names_both_layouts_and_the_storage_the_result_reads(op):
    x = make_x()
    result = eval(op, {"x": x, "torch": torch})
    root = ET.fromstring(render_svg(evidence(op, x, result)))
    words = desc(root)
    assert layout_words("Parent", "x", x) in words
    assert layout_words("Result", op, result) in words
    read = storage_oracle(result).flatten()
    assert said_positions(words) == set(read.tolist())
    times = set(torch.bincount(read).tolist()) - {0}
    assert ("each once" in words) == (times == {1})
    first = ", ".join(map(str, read[:12].tolist()))
    assert f"read elements {first}" in words or f"reads element {first}." in words


def test_the_image_is_named_by_its_own_title_and_desc_with_ids_unique_per_drawing():
    x = make_x()
    drawn = [ET.fromstring(Diagram(evidence("x.t()", x, x.t())).svg) for _ in range(2)]
    ids = []
    for root in drawn:
        assert root.get("role") == "img" and root.get("aria-label") is None
        named = root.get("aria-labelledby").split()
        assert named == [root.find(f"{SVG}title").get("id"), root.find(f"{SVG}desc").get("id")]
        ids += named
    assert len(set(ids)) == 4


def test_a_copy_says_its_new_storage_and_the_evidence_that_decided_it():
    x = make_x()
    made = measure("x.t().contiguous()", "torch.arange(24.).reshape(4, 6)", "cpu")
    result = x.t().contiguous()
    words = Diagram(made).description
    assert made.verdict == "copy" and "reads none of the parent's" in words
    assert f"new storage: {made.bytes_allocated} bytes (measured allocation)" in words.lower()
    assert f"same storage: {YES_NO[made.same_storage]}" in words
    assert f"writes through to the parent: {YES_NO[made.write_through]}" in words
    assert all(kernel in words for kernel in made.copy_kernels) and made.copy_kernels
    assert layout_words("Result", made.op, result) in words


def test_a_view_says_the_evidence_that_decided_it():
    made = measure("x.t()", "torch.arange(24.).reshape(4, 6)", "cpu")
    words = Diagram(made).description
    assert made.verdict == "view"
    assert f"writes through to the parent: {YES_NO[made.write_through]}" in words
    assert f"{made.bytes_allocated} bytes allocated" in words


def test_an_error_says_pytorchs_message_in_words():
    colmajor = make_x().t().contiguous().t()
    with pytest.raises(RuntimeError) as refused:
        colmajor.view(3, 8)
    made = evidence("x.view(3, 8)", colmajor, None, "error", message=str(refused.value))
    words = desc(ET.fromstring(render_svg(made)))
    assert str(refused.value) in words
    assert layout_words("Parent", "x", colmajor) in words


def backdrops(root: ET.Element) -> list[tuple[ET.Element, str]]:
    """Each text with the fill of the last rect drawn before it under its anchor point."""
    rects, found = [], []
    for element in root.iter():
        if element.tag == f"{SVG}rect":
            rects.append(element)
        elif element.tag == f"{SVG}text":
            px, py = float(element.get("x")), float(element.get("y")) - 4
            under = [
                r.get("fill")
                for r in rects
                if float(r.get("x")) <= px <= float(r.get("x")) + float(r.get("width"))
                and float(r.get("y")) <= py <= float(r.get("y")) + float(r.get("height"))
            ]
            found.append((element, under[-1]))
    return found


DRAWN = [
    ("x.t()", lambda x: x.t(), "view"),
    ("x.unsqueeze(0).expand(3, 4, 6)", lambda x: x.unsqueeze(0).expand(3, 4, 6), "view"),
    ("x.t().contiguous()", lambda x: x.t().contiguous(), "copy"),
    ("x.view(torch.uint8)", lambda x: x.view(torch.uint8), "view"),
]


@pytest.mark.parametrize("op, make, verdict", DRAWN, ids=[d[0] for d in DRAWN])
def test_every_text_reaches_4_5_to_1_on_the_diagram_s_own_background(op, make, verdict):
    x = make_x()
    root = ET.fromstring(render_svg(evidence(op, x, make(x), verdict)))
    first = next(root.iter(f"{SVG}rect"))
    assert first.get("fill") == "#ffffff" and first.get("width") == root.get("width")
    for element, behind in backdrops(root):
        ink = element.get("fill") or root.get("fill")
        assert contrast(ink, behind) >= 4.5, (text(element), ink, behind)


def test_the_storage_a_result_reads_is_marked_3_to_1_and_told_apart_by_position():
    x = make_x()
    root = ET.fromstring(render_svg(evidence("x[1:, ::3]", x, x[1:, ::3])))
    strip = part(root, "storage")
    legend = text(strip)
    for slot in slots(strip).values():
        box, *bars = slot.iter(f"{SVG}rect")
        top, bottom = float(box.get("y")), float(box.get("y")) + float(box.get("height"))
        for bar in bars:
            assert contrast(bar.get("fill"), box.get("fill")) >= 3
            middle = float(bar.get("y")) + float(bar.get("height")) / 2
            place = "top" if middle < (top + bottom) / 2 else "bottom"
            role = "parent" if bar.get("fill") == COLOURS["parent"] else "result"
            assert f"{place} bar: reached by the {role}" in legend
        reads = int(slot.get("data-result")) > 0
        assert len(bars) == 1 + reads  # the parent reaches every slot, the result some
