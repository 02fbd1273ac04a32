"""Writing evidence records as a table, CSV, JSON or Markdown for the command line: a table or
Markdown in units a person reads (sizes, times, kernels as a comma list, "—" for none), CSV and
JSON with the raw numbers, named by their units (`bytes`, `time_us`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence

from viewcopy.display import units

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


SHOWN: dict[str, Callable[[object], str]] = {
    "bytes": units.size,
    "bytes_allocated": units.size,
    "time_us": lambda us: units.seconds(us / 1e6),
}
"""How a table shows the columns that carry a unit."""


def cell(value: object) -> str:
    """A record value as CSV holds it: lists joined by spaces, None as a dash."""
    if value is None:
        return "-"
    if isinstance(value, list):
        return (
            " ".join(map(str, value))
            if all(isinstance(v, str) for v in value)
            else str(tuple(value))
        )
    return str(value)


def shown(column: str, value: object) -> str:
    """A record value as a table shows it: in its unit where the column has one, names as a
    comma list, "—" for none."""
    if column in SHOWN and isinstance(value, int | float) and not isinstance(value, bool):
        return SHOWN[column](value)
    if value is None or value == []:
        return units.NONE
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return units.kernels(value)
    return cell(value)


def render(records: Sequence[dict[str, object]], fmt: str, columns: Sequence[str] = COLUMNS) -> str:
    """All records in one format; JSON keeps every field, the others `columns`."""
    if fmt == "json":
        return json.dumps(list(records), indent=2)
    if fmt == "csv":
        rows = [[cell(r.get(c)) for c in columns] for r in records]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    rows = [[shown(c, r.get(c)) for c in columns] for r in records]
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
    return "\n".join(f"{k.ljust(width)}  {shown(k, v)}" for k, v in record.items())
