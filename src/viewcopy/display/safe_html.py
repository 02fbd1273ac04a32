"""HTML made safe to show an instructor: an allowlist sanitizer (nh3, the Python binding of the
Rust crate ammonia) that keeps what the lab and Markdown draw and nothing that runs or loads.

Kept: text formatting, tables, links to http(s)/mailto, images inline as data (PNG, JPEG, GIF,
SVG) or notebook attachments, Pygments' highlighting classes, the SVG elements and attributes
that viewcopy.display.diagram emits, and what makes them accessible: a diagram's `<title>` and
`<desc>` with the ids its `aria-labelledby` names (its own ids only, never one of the page's),
document roles (no role that poses as a control) and `tabindex="0"` on a region that scrolls.
Removed: scripts, event handlers, `javascript:` and other unlisted
URL schemes, `url(...)` in attributes, iframes, forms, objects, stylesheets, remote images (a
tracking pixel) and every CSS property not listed.
"""

from __future__ import annotations

import functools
import html
import html.parser
import re
from collections.abc import Callable
from urllib.parse import urlsplit

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from pygments.token import STANDARD_TYPES

TEXT_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
SVG_TAGS = {"svg", "g", "rect", "text", "tspan", "title", "desc", "line", "path", "circle",
            "polyline"}  # fmt: skip
"""The SVG elements the lab's diagrams use (and simple shapes): none can load or run anything."""

PRESENTATION = {"fill", "stroke", "stroke-width", "font-family", "font-size", "font-weight",
                "text-anchor", "opacity"}  # fmt: skip
DIAGRAM_DATA = {"data-part", "data-verdict", "data-index", "data-parent", "data-result",
                "data-storage"}  # fmt: skip
LABELLED = {"aria-labelledby", "aria-describedby"}
ATTRIBUTES = {
    "*": {"title", "style", "role", "aria-label", *LABELLED, "lang", "dir", *DIAGRAM_DATA},
    "div": {"tabindex"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start"},
    "details": {"open"},
    **{h: {"id"} for h in ("h1", "h2", "h3", "h4", "h5", "h6")},
    "svg": {"xmlns", "width", "height", "viewBox", *PRESENTATION},
    **{tag: {"id"} for tag in ("title", "desc")},
    "g": PRESENTATION,
    "rect": {"x", "y", "width", "height", "rx", "ry", *PRESENTATION},
    "text": {"x", "y", "dx", "dy", *PRESENTATION},
    "tspan": {"x", "y", "dx", "dy", *PRESENTATION},
    "line": {"x1", "y1", "x2", "y2", *PRESENTATION},
    "path": {"d", *PRESENTATION},
    "circle": {"cx", "cy", "r", *PRESENTATION},
    "polyline": {"points", *PRESENTATION},
}
HIGHLIGHT = {name for name in STANDARD_TYPES.values() if name} | {"highlight"}
DIAGRAM_CLASSES = {"cell", "slot", "ellipsis", "multiplicity"}
CLASSES = {
    "g": DIAGRAM_CLASSES,
    "text": DIAGRAM_CLASSES,
    "div": {"viewcopy-diagram", "viewcopy-sanitized", "highlight"},
    "table": {"viewcopy-table"},
    "a": {"anchor-link"},
    "span": HIGHLIGHT,
    "pre": HIGHLIGHT,
    "code": HIGHLIGHT,
}
STYLES = {
    "background-color", "color", "text-align", "vertical-align", "font-weight", "font-style",
    "font-family", "font-size", "white-space", "overflow-x", "overflow-wrap", "word-break",
    "padding", "margin", "border", "border-collapse", "width", "max-width",
}  # fmt: skip
DIAGRAM_IDS = {("id", "title"), ("id", "desc")}
OWN_ID = re.compile(r"viewcopy-[0-9a-f]+-(title|desc)")
"""The ids a diagram gives its `<title>` and `<desc>` (viewcopy.display.svg_canvas)."""
ROLES = {"img", "region", "group", "note", "status", "presentation", "none"}
"""Roles that structure a document; none poses as a control (a button, a link)."""
SCHEMES = {"http", "https", "mailto", "data", "attachment"}
INLINE_IMAGES = tuple(f"data:image/{kind};base64," for kind in ("png", "jpeg", "gif", "svg+xml"))
"""An image the page holds (an SVG shown as an image runs no script and loads nothing)."""


def _attribute(element: str, attribute: str, value: str) -> str | None:
    """Per value: images only from the notebook itself, links never to data, nothing `url()`."""
    squeezed = "".join(value.split()).lower()
    if "url(" in squeezed or "expression(" in squeezed:
        return None
    checked = attribute in {"role", "tabindex", *LABELLED} or (attribute, element) in DIAGRAM_IDS
    if checked and not _accessible(attribute, value):
        return None
    if attribute == "src":
        inline = squeezed.startswith(INLINE_IMAGES) or urlsplit(squeezed).scheme == "attachment"
        return value if inline else None
    if attribute == "href" and urlsplit(squeezed).scheme in {"data", "attachment"}:
        return None
    return value


def _accessible(attribute: str, value: str) -> bool:
    """An id is a diagram's own, a label names only such ids, a role is a document's, and
    `tabindex` only puts an element in the page's order (never ahead of it, never out of it)."""
    if attribute == "role":
        return value in ROLES
    if attribute == "tabindex":
        return value == "0"
    ids = value.split()
    return bool(ids) and all(OWN_ID.fullmatch(i) for i in ids)


MEMO_CHARS = 200_000
"""Markup and Markdown up to this long are cleaned once a process (`_memo`): a grader meets the
same Markdown cells and much the same diagrams in every hand-in."""


def _memo(clean: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """`clean`, remembering its last 256 answers for texts up to MEMO_CHARS long (it is pure)."""
    remembered = functools.lru_cache(maxsize=256)(clean)

    @functools.wraps(clean)
    def cleaned(text: str) -> str | None:
        return remembered(text) if len(text) <= MEMO_CHARS else clean(text)

    return cleaned


@_memo
def sanitize_html(markup: str) -> str:
    """`markup` with everything outside the allowlist removed (text kept, escaped)."""
    return nh3.clean(
        markup,
        tags=TEXT_TAGS | SVG_TAGS,
        clean_content_tags={"script", "style", "iframe", "object", "embed", "template"},
        attributes=ATTRIBUTES,
        attribute_filter=_attribute,
        link_rel=None,
        url_schemes=SCHEMES,
        allowed_classes=CLASSES,
        filter_style_properties=STYLES,
        strip_comments=True,
    )


def cleaned_if_changed(markup: str) -> str | None:
    """`markup` sanitized, or None when sanitizing removes nothing (the same elements, attributes
    and text)."""
    cleaned = sanitize_html(markup)
    return None if _events(markup) == _events(cleaned) else cleaned


def is_clean(markup: str) -> bool:
    """Whether sanitizing `markup` removes nothing."""
    return cleaned_if_changed(markup) is None


def safe_markdown(source: str, attachments: dict | None = None) -> str | None:
    """None when Markdown `source` renders to clean HTML (as nbconvert renders it for formgrader
    and feedback); else that rendering sanitized, as one HTML block on one line, which every
    Markdown renderer passes through as it is. Markdown that cannot be rendered is shown as text."""
    return _markdown(source, attachments) if attachments else _plain_markdown(source)


@_memo
def _plain_markdown(source: str) -> str | None:
    """safe_markdown of a cell without attachments."""
    return _markdown(source, None)


def _markdown(source: str, attachments: dict | None) -> str | None:
    renderer = IPythonRenderer(escape=False, attachments=attachments or {})
    try:
        rendered = MarkdownWithMath(renderer=renderer).render(source)
    except Exception:  # a missing attachment, a parser failure: the source is shown, as text
        return one_block(f"<pre>{html.escape(source)}</pre>")
    cleaned = cleaned_if_changed(rendered)
    return None if cleaned is None else one_block(cleaned)


def one_block(markup: str) -> str:
    """Sanitized HTML as a single-line block Markdown keeps verbatim, with a visible note."""
    note = (
        "<p><small><i>(shown sanitized: the grader removed scripts, event handlers and remote "
        "resources from this hand-in)</i></small></p>"
    )
    flat = markup.replace("\r", "").replace("\n", "&#10;")
    return f'<div class="viewcopy-sanitized">{flat}{note}</div>'


class _Events(html.parser.HTMLParser):
    """An HTML fragment as the events a browser sees: tags with their attributes, and text."""

    VOID = {"br", "col", "hr", "img", "input", "meta", "link", "source", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []

    def handle_starttag(self, tag, attrs):
        attrs = ((k, _declarations(v) if k == "style" else v or "") for k, v in attrs)
        self.events.append(("start", tag, tuple(sorted(attrs))))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag not in self.VOID:
            self.events.append(("end", tag))

    def handle_data(self, data):
        if data.strip():
            self.events.append(("text", " ".join(data.split())))

    def handle_comment(self, data):
        self.events.append(("comment", data))

    def unknown_decl(self, data):
        self.events.append(("decl", data))

    def handle_pi(self, data):
        self.events.append(("pi", data))


def _declarations(style: str | None) -> str:
    """A style attribute without its optional spaces (the sanitizer writes it that way)."""
    pairs = (d.split(":", 1) for d in (style or "").split(";") if ":" in d)
    return ";".join(f"{k.strip().lower()}:{v.strip()}" for k, v in pairs)


def _events(markup: str) -> list[tuple]:
    parser = _Events()
    parser.feed(markup)
    parser.close()
    return _merged(parser.events)


def _merged(events: list[tuple]) -> list[tuple]:
    """Adjacent text joined (a parser may split text at entities)."""
    out: list[tuple] = []
    for event in events:
        if event[0] == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", f"{out[-1][1]} {event[1]}")
        else:
            out.append(event)
    return out
