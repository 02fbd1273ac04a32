"""Writing evidence records as a table, CSV, JSON or Markdown for the command line."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

COLUMNS: tuple[str, ...] = (
    "item",
    "op",
    "device",
    "parent",
    "verdict",
    "same_object",
    "same_storage",
    "same_data_ptr",
    "write_through",
    "bytes_allocated",
    "copy_kernels",
    "shape",
    "stride",
    "storage_offset",
    "is_contiguous",
    "message",
)
FORMATS: tuple[str, ...] = ("table", "csv", "json", "markdown")


def cell(value: object) -> str:
    """A record value as plain text: lists joined, None as a dash."""
    if value is None:
        return "-"
    if isinstance(value, list):
        return (
            " ".join(map(str, value))
            if all(isinstance(v, str) for v in value)
            else str(tuple(value))
        )
    return str(value)


def render(records: Sequence[dict[str, object]], fmt: str, columns: Sequence[str] = COLUMNS) -> str:
    """All records in one format; JSON keeps every field, the others `columns`."""
    if fmt == "json":
        return json.dumps(list(records), indent=2)
    rows = [[cell(r.get(c)) for c in columns] for r in records]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    if fmt == "markdown":
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(v.replace("|", "\\|") for v in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def render_one(record: dict[str, object], fmt: str) -> str:
    """One record: JSON object, or `field: value` lines."""
    if fmt == "json":
        return json.dumps(record, indent=2)
    width = max(map(len, record))
    return "\n".join(f"{k.ljust(width)}  {cell(v)}" for k, v in record.items())
