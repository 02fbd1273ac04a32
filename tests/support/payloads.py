"""A hand-in that tries to script the instructor's browser, and a check for active content that
does not go through the sanitizer under test (the standard library's HTML parser).

Every payload sets `window.pwned_<place>` and tries to write `pwned_<place>.txt` into the course
through the Jupyter REST API with the page's session, as the attack measured on formgrader did.
"""

from __future__ import annotations

import ast
import base64
import html.parser
import struct
import zlib
from dataclasses import replace
from pathlib import Path

import nbformat
from nbconvert.filters.markdown_mistune import markdown2html_mistune

import viewcopy
from viewcopy import notebook as lab
from viewcopy.course.assignment import (
    NEXT_PREDICTIONS_CELL,
    NOTEBOOK,
    grade_id,
)
from viewcopy.course.folder import mark_submitted
from viewcopy.demo.synthetic import Student, hand_in, predictions_source
from viewcopy.display.explorer import Explorer
from viewcopy.exercise.next_predictions import hand_in_draw
from viewcopy.instructor.master import measured_next_predictions
from viewcopy.locking.file import read_lock


def _png_1x1() -> bytes:
    """A 1x1 white PNG, built here."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff")
    chunks = chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + chunks


STUDENT = "scripts_the_browser"
TRACKER = "https://tracker.invalid/pixel.png"
PNG = base64.b64encode(_png_1x1()).decode()
PLACES = (
    "rule", "next_rule", "rules_after", "answer", "md_img", "md_script", "raw", "html_output",
    "html_script", "js_output", "svg_output", "markdown_output", "image_width", "kept_output",
)  # fmt: skip
"""Where the hand-in hides a payload (and a link to `javascript:` and two remote images)."""


def script(place: str) -> str:
    """JavaScript without spaces or double quotes (it fits any attribute): a marker, then a
    write into the course through the Jupyter API with the page's XSRF token."""
    return (
        f"window.pwned_{place}=1;fetch('/api/contents/pwned_{place}.txt',{{method:'PUT',"
        "headers:{'X-XSRFToken':document.cookie.replace(/.*_xsrf=([^;]*).*/,'$1')},"
        f"body:JSON.stringify({{type:'file',format:'text',content:'{place}'}})}})"
    )


def img(place: str) -> str:
    return f'<img src=x onerror="{script(place)}">'


def added_cells() -> list[nbformat.NotebookNode]:
    """Cells the student adds: Markdown, a raw HTML cell, and code whose outputs are active."""
    v4 = nbformat.v4
    tag = "<script>" + script("html_script") + "</script>"
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" onload="' + script("svg_output") + '">'
        '<rect width="5" height="5"/></svg>'
    )
    pixel = f'<img src="{TRACKER}">'
    displays = [
        f"HTML({img('html_output')!r})",
        f"HTML({tag!r})",
        f"Javascript({script('js_output')!r})",
        f"SVG({svg!r})",
        f"Markdown({img('markdown_output')!r})",
        f"HTML({pixel!r})",
    ]
    code = "from IPython.display import HTML, SVG, Javascript, Markdown, display\n" + "".join(
        f"display({d})\n" for d in displays
    )
    width = {"image/png": {"width": f"1 onerror={script('image_width')}"}}
    code += f"display({{'image/png': {PNG!r}}}, raw=True, metadata={width!r})\n"
    raw = v4.new_raw_cell(img("raw"), metadata={"raw_mimetype": "text/html"})
    return [
        v4.new_markdown_cell(f"My notes on the twenty.\n\n{img('md_img')}"),
        v4.new_markdown_cell(f"<script>{script('md_script')}</script>"),
        v4.new_markdown_cell(f"[the rubric](javascript:{script('md_link')})\n\n![me]({TRACKER})"),
        raw,
        v4.new_code_cell(code),
    ]


def add_cells(notebook: nbformat.NotebookNode) -> None:
    notebook.cells[1:1] = added_cells()


def hostile_student(perfect: Student) -> Student:
    """The perfect student's answers with payloads in a rule, RULES_AFTER and ANSWER_21, and the
    added cells; handed in unrun (hand_in_locked writes the locks the lab's cells would)."""
    predictions = ast.literal_eval(perfect.cells["predictions"].split("=", 1)[1])
    verdict, rule = predictions[1]
    predictions[1] = (verdict, f"{rule} {img('rule')}")
    cells = {
        **perfect.cells,
        "predictions": predictions_source(predictions),
        "rules_after": f"RULES_AFTER = {{1: {('storage ' + img('rules_after'))!r}}}\n",
        "answer_21": f'ANSWER_21 = """A view shares the storage. {img("answer")}"""\n',
    }
    return Student(
        STUDENT,
        "hides scripts in rules, Markdown, a raw cell and outputs",
        cells,
        runs=False,
        classifier="storage",
        tamper=add_cells,
    )


def as_scored(student: Student) -> Student:
    """The profile expected_scores reads: locked (as if run), next ops predicted by the rules."""
    return replace(student, runs=True, next_ops="rules")


def hand_in_locked(student: Student, course: Path) -> Path:
    """Hand the student in, with the locks the lab's own cells write (run here on the student's
    literals: no student code runs outside the sandbox), NEXT_PREDICTIONS carrying a payload, and
    the explorer's diagram as its cell shows it, a payload beside it (grading keeps the outputs of
    a cell that measures for the student, sanitized)."""
    folder = hand_in(student, course)
    predictions = _literal(student.cells["predictions"])
    viewcopy.lock(predictions, directory=folder)
    viewcopy.reveal(predictions, directory=folder, devices=("cpu",))
    ops = hand_in_draw(read_lock(folder))
    sheet = measured_next_predictions({op.id: (op.parent_expr, op.op) for op in ops})
    first = next(iter(sheet))
    sheet[first] = (sheet[first][0], f"{sheet[first][1]} {img('next_rule')}")
    lab.lock_next(sheet, directory=folder)
    lab.lock_production(_literal(student.cells["production_predictions"]), directory=folder)
    notebook = nbformat.read(folder / NOTEBOOK, as_version=4)
    (cell,) = [c for c in notebook.cells if grade_id(c) == NEXT_PREDICTIONS_CELL]
    lines = "".join(f"    {op_id!r}: {pair!r},\n" for op_id, pair in sheet.items())
    cell.source = f"NEXT_PREDICTIONS = {{\n{lines}}}\n"
    (shown,) = [c for c in notebook.cells if grade_id(c) == "explorer"]
    drawn = Explorer(("cpu",)).static_fallback() + img("kept_output")
    shown.outputs = [
        nbformat.v4.new_output(
            "execute_result", {"text/html": drawn, "text/plain": "Explorer"}, execution_count=1
        )
    ]
    nbformat.write(notebook, folder / NOTEBOOK)
    mark_submitted(folder)
    return folder


def _literal(source: str):
    return ast.literal_eval(source.split("=", 1)[1])


# --- what a browser would run or load ------------------------------------------------------

ACTIVE_TAGS = {
    "script", "iframe", "frame", "object", "embed", "form", "style", "base", "link", "meta",
    "applet", "foreignobject", "animate", "set", "use", "image", "math",
}  # fmt: skip
SCRIPT_SCHEMES = ("javascript:", "vbscript:", "data:text")
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "data", "srcdoc", "poster"}


class _Active(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ACTIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = "".join((value or "").split()).lower()
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}>")
            if name in URL_ATTRIBUTES and value.startswith(
                ("javascript:", "vbscript:", "data:text")
            ):
                self.found.append(f"<{tag} {name}={value[:20]}>")
            if name == "src" and value.startswith(("http:", "https:", "//")):
                self.found.append(f"<{tag} src> remote")
            if name == "style" and ("url(" in value or "expression(" in value):
                self.found.append(f"<{tag} style> url")


def active_content(markup: str) -> list[str]:
    """What in `markup` would run script or load from elsewhere, if anything."""
    parser = _Active()
    parser.feed(markup)
    parser.close()
    return parser.found


def notebook_active_content(notebook: nbformat.NotebookNode) -> list[str]:
    """Active content anywhere formgrader or feedback would render it, by cell index."""
    found = ["notebook: widget state"] if "widgets" in notebook.metadata else []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            found += [f"{index}: {p}" for p in active_content(markdown2html_mistune(cell.source))]
        elif cell.cell_type == "raw":
            found += [f"{index}: {p}" for p in active_content(cell.source)]
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for mime in ("text/html", "image/svg+xml"):
                found += [f"{index}: {p}" for p in active_content(str(data.get(mime, "")))]
            if "text/markdown" in data:
                rendered = markdown2html_mistune(str(data["text/markdown"]))
                found += [f"{index}: {p}" for p in active_content(rendered)]
            found += [f"{index}: {m}" for m in data if "javascript" in m]
            for key, value in _sizes(output.get("metadata", {})):
                if not isinstance(value, int | float):
                    found.append(f"{index}: {key} metadata {str(value)[:20]}")
    return found


def _sizes(metadata: dict):
    for key, value in metadata.items():
        if key in ("width", "height"):
            yield key, value
        elif isinstance(value, dict):
            yield from ((f"{key} {k}", v) for k, v in value.items() if k in ("width", "height"))
