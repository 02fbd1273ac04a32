"""The diagrams' look: the type and its metrics, the margin, elided widths, and every colour."""

from __future__ import annotations

FONT = 12
"""Font size of all text, in px."""
FONT_FAMILY = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
CHAR = 7.3
"""Advance of one monospace character at FONT px: the unit text widths are measured in."""
LINE = 17
"""Height of one line of text."""
BASELINE = 12
"""From the top of a line of text to its baseline."""
MARGIN = 14
"""The figure's margin, on every side."""
ELIDED_W = 18
"""Width of an elided row, column, panel or storage run (drawn as `…`)."""

INK = "#1b1b1b"  # text, unless drawn in a role's colour: the diagram carries its own white
MUTED = "#555"  # index labels and legends: 7.5:1 on white, 7:1 on a storage slot
BACKGROUND = "#ffffff"
"""The diagram's own white, under everything it draws."""
OUTLINE = "#666"
"""The edge of a grid cell or a storage slot."""
SLOT_FILL = "#f7f7f7"
"""A storage slot's fill."""
COLOURS = {"parent": "#1f5f9e", "result": "#b4430f"}
"""Each role's colour: its heading, its bars on a storage strip and its `×k` counts."""
FILLS = {"parent": "#dce9f7", "result": "#fbe2d3"}
"""Each role's grid cells' fill."""
BADGES = {
    "view": ("#2e7d32", "VIEW", "the result reads the parent's storage"),
    "copy": ("#8a4b00", "COPY", "the result owns new storage"),
    "error": ("#b71c1c", "ERROR", "PyTorch refused this op on this parent"),
}
"""Each verdict's badge colour, its word on the badge, and what it means."""
OTHER_BADGE = "#444"
"""The badge colour of a verdict BADGES does not name."""
BADGE_WORD = "#ffffff"
"""The verdict's word, on its badge."""
