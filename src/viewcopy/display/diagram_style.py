"""The diagrams' look, one home each: font metrics, the margin, and the colours of ink, roles and
verdicts."""

from __future__ import annotations

FONT = 12
CHAR = 7.3  # advance of one monospace character at FONT px
LINE = 17
GAP_W = 18  # width of an elided row, column, panel or storage run
PAD = 14
INK = "#1b1b1b"  # text, unless drawn in a role's colour: the diagram carries its own white
MUTED = "#555"  # index labels and legends: 7.5:1 on white, 7:1 on a storage slot
SLOT = "#f7f7f7"
COLOURS = {"parent": "#1f5f9e", "result": "#b4430f"}
FILLS = {"parent": "#dce9f7", "result": "#fbe2d3"}
BADGES = {
    "view": ("#2e7d32", "VIEW", "the result reads the parent's storage"),
    "copy": ("#8a4b00", "COPY", "the result owns new storage"),
    "error": ("#b71c1c", "ERROR", "PyTorch refused this op on this parent"),
}
