"""An LMS's CSV export as rows of cells: read however the LMS wrote it (delimiter, byte-order
mark, line ends), compared trimmed and case-insensitive, and written back the same way."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from viewcopy.files.atomic import write_atomically
from viewcopy.lms.errors import ImportFileError


def cell_key(value: str | None) -> str:
    """A cell or a name as compared with another: trimmed and case-insensitive."""
    return (value or "").strip().casefold()


@dataclass
class Table:
    """A CSV file as rows of cells, and how it was written (delimiter, BOM, line ends)."""

    path: Path
    rows: list[list[str]]
    delimiter: str = ","
    bom: bool = False
    newline: str = "\n"

    @classmethod
    def read(cls, path: Path, lms: str) -> Table:
        path = Path(path)
        if not path.is_file():
            raise ImportFileError(f"{path}: no such file (the gradebook export from {lms})")
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ImportFileError(
                f"{path} is not UTF-8 text: export it from {lms} again as CSV (UTF-8), or save "
                "it from a spreadsheet as 'CSV UTF-8'"
            ) from None
        delimiter = _delimiter(text)
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
        if not rows or not any(cell.strip() for cell in rows[0]):
            raise ImportFileError(f"{path} is empty: export the gradebook from {lms} again")
        newline = "\r\n" if "\r\n" in text else "\n"
        return cls(path, rows, delimiter, raw.startswith(b"\xef\xbb\xbf"), newline)

    @property
    def header(self) -> list[str]:
        return [cell.strip() for cell in self.rows[0]]

    def column(self, name: str) -> int | None:
        return self.header.index(name) if name in self.header else None

    def cell(self, row: int, column: int) -> str:
        cells = self.rows[row]
        return cells[column] if column < len(cells) else ""

    def set(self, row: int, column: int, value: str) -> None:
        cells = self.rows[row]
        cells.extend([""] * (column + 1 - len(cells)))
        cells[column] = value

    def insert_column(self, at: int, name: str, fill: str) -> None:
        """A new column at `at` (rows shorter than the header are padded first)."""
        width = len(self.rows[0])
        for i, cells in enumerate(self.rows):
            cells.extend([""] * (width - len(cells)))
            cells.insert(at, name if i == 0 else fill)

    def write(self, out: Path) -> None:
        """Write the table the way the export was written, in one rename."""
        text = io.StringIO(newline="")
        csv.writer(text, delimiter=self.delimiter, lineterminator=self.newline).writerows(self.rows)
        write_atomically(out, ("\ufeff" if self.bom else "") + text.getvalue())


def _delimiter(text: str) -> str:
    """The delimiter that splits the first lines into the same number of fields, most of them
    (Canvas writes `;` where the locale's decimal mark is a comma; Moodle offers tabs too)."""
    best, fields = ",", 0
    for candidate in (",", ";", "\t"):
        try:
            first = list(csv.reader(io.StringIO(text, newline=""), delimiter=candidate))[:3]
        except csv.Error:
            continue
        counts = {len(row) for row in first}
        if len(counts) == 1 and (n := counts.pop()) > fields:
            best, fields = candidate, n
    return best
