"""SVG primitives: text made safe for XML, and a canvas recording elements and their width."""

from __future__ import annotations

import math
import re
import secrets
from xml.sax.saxutils import escape, quoteattr

from viewcopy.display.diagram_style import (
    BACKGROUND,
    CHAR,
    FONT,
    FONT_FAMILY,
    INK,
    LINE,
    MARGIN,
    OUTLINE,
)

MIN_BOX_CHARS = 2
"""A grid cell or storage slot is at least this many characters wide, however short its labels."""
BOX_ROOM = 10
"""Width a grid cell or storage slot adds to its widest label, half on each side."""
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def escape_svg_text(text: object) -> str:
    """Text made safe for XML: escaped, without the control characters XML forbids."""
    return escape(_CONTROL.sub("\N{REPLACEMENT CHARACTER}", str(text)))


def xml_attrs(attrs: dict[str, object]) -> str:
    """Attributes written ` key="value"`, each value quoted and without forbidden characters."""
    return "".join(
        f" {key}={quoteattr(_CONTROL.sub('?', str(value)))}" for key, value in attrs.items()
    )


def box_width(chars: int) -> float:
    """The width of a grid cell or storage slot whose widest label is `chars` characters."""
    return chars * CHAR + BOX_ROOM


class SvgCanvas:
    """SVG elements in drawing order, and the width they cover."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.width = 0.0

    def open(self, **attrs: object) -> None:
        self.parts.append(f"<g{xml_attrs(attrs)}>")

    def close(self) -> None:
        self.parts.append("</g>")

    def rect(self, x: float, y: float, w: float, h: float, fill: str, **attrs: object) -> None:
        attrs = {"stroke": OUTLINE, **attrs}
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}"'
            f"{xml_attrs(attrs)}/>"
        )
        self.width = max(self.width, x + w)

    def text(self, x: float, y: float, text: str, *, middle: bool = False, **attrs: object) -> None:
        anchor = ' text-anchor="middle"' if middle else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}"{anchor}{xml_attrs(attrs)}>'
            f"{escape_svg_text(text)}</text>"
        )
        self.width = max(self.width, x + len(text) * CHAR * (0.5 if middle else 1))

    def ellipsis(self, x: float, y: float) -> None:
        """`…` centred on `x`, standing for what is elided there."""
        self.text(x, y, "…", middle=True, **{"class": "ellipsis"})

    def lines(self, x: float, y: float, lines: list[str], **attrs: object) -> float:
        """One text element of several lines; returns the y below it."""
        spans = "".join(
            f'<tspan x="{x:.1f}" dy="{0 if i == 0 else LINE}">{escape_svg_text(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}"{xml_attrs(attrs)}>{spans}</text>')
        self.width = max(self.width, x + max((len(s) for s in lines), default=0) * CHAR)
        return y + LINE * len(lines)

    def svg(self, height: float, label: str, desc: str) -> str:
        """The document: an image named by its `<title>` and `<desc>` (ids unique on any page),
        over its own white background, so its colours hold in any theme."""
        width = math.ceil(self.width + MARGIN)
        height = math.ceil(height)
        key = f"viewcopy-{secrets.token_hex(6)}"
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
            f' viewBox="0 0 {width} {height}" role="img"'
            f' aria-labelledby="{key}-title {key}-desc" fill="{INK}"'
            f' font-family="{FONT_FAMILY}" font-size="{FONT}">'
            f'<title id="{key}-title">{escape_svg_text(label)}</title>'
            f'<desc id="{key}-desc">{escape_svg_text(desc)}</desc>'
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="{BACKGROUND}"/>'
            + "".join(self.parts)
            + "</svg>"
        )
