"""Each LMS's gradebook export as its import reads it back (Canvas, Moodle): which rows are
students, which columns name them and hold the assignment, and where a new column and its points
go."""

from __future__ import annotations

import re

from viewcopy.course.class_scores import format_score
from viewcopy.lms.csv_table import Table, cell_key
from viewcopy.lms.errors import ImportFileError


class ExportLayout:
    """How one LMS's gradebook export reads and its import is written."""

    name = ""
    lms = ""
    identifiers: tuple[str, ...] = ()
    """The columns that may hold a student's login, LMS id or email."""
    no_score = ""
    """What a cell with no score holds in a column the merge adds."""
    export_steps = ""
    import_steps = ""

    def check(self, table: Table) -> None:
        """ImportFileError unless the table is this LMS's export."""

    def student_rows(self, table: Table) -> list[int]:
        """The rows that are students (not the header or a row about the columns)."""
        return [i for i in range(1, len(table.rows)) if any(c.strip() for c in table.rows[i])]

    def describe(self, table: Table, row: int) -> str:
        """A row as a person finds it in the LMS."""
        raise NotImplementedError

    def score_columns(self, table: Table, titles: set[str]) -> list[int]:
        """The assignment's columns already in the export (its title matched)."""
        raise NotImplementedError

    def add_column(self, table: Table, title: str) -> int:
        table.insert_column(len(table.rows[0]), title, self.no_score)
        return len(table.rows[0]) - 1

    def set_max(self, table: Table, column: int, max_score: float, added: bool) -> str | None:
        """Give the column the assignment's points where the layout has them; a note when the
        LMS's points change or must be set by hand."""
        return None

    def _missing(self, table: Table, column: str) -> ImportFileError:
        found = ", ".join(c for c in table.header if c) or "none"
        return ImportFileError(
            f"{table.path} is not a {self.lms} gradebook export: it has no {column!r} column "
            f"(its columns: {found}). {self.export_steps}"
        )


class CanvasLayout(ExportLayout):
    """Canvas's Grades > Export CSV, imported by Grades > Import.

    Grades > Export as Canvas writes it (instructure/canvas-lms, `GradebookExporter`,
    lib/gradebook_exporter.rb) and reads it back at Grades > Import (`GradebookImporter`,
    lib/gradebook_importer.rb); university guides to the import (OSU's "Import CSV File for Carmen
    Grades", VCU's "Gradebook Action Menu") say the same. The header is `Student, ID, [SIS User
    ID], SIS Login ID, [Integration ID], [Root Account], Section`, the custom columns, one
    `Title (id)` column per assignment, then read-only totals; a row of `Manual Posting` cells
    (once `Muted`) follows it when an assignment posts manually, then the `    Points Possible`
    row, then a row per student. The importer finds a student by ID, SIS User ID, SIS Login ID,
    then name; an assignment by the `(id)` of its column, else by title, else makes a new one
    whose points come from the Points Possible row (which also sets an existing one's points); it
    reads `;`-separated files and decimal commas too.
    """

    name, lms = "canvas", "Canvas"
    identifiers = ("ID", "SIS User ID", "SIS Login ID")
    export_steps = (
        "In Canvas, open Grades > Export > Export Entire Gradebook and pass the file it gives "
        "unchanged."
    )
    import_steps = (
        "In Canvas, open Grades > Import, choose this file, check the changes Canvas shows, "
        "and upload."
    )
    POINTS = "Points Possible"
    HIDDEN = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
    TITLE_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")

    def check(self, table: Table) -> None:
        header = table.header
        if "Student" not in header and not {"LastName", "FirstName"} <= set(header):
            raise self._missing(table, "Student")
        for column in ("ID", "SIS Login ID", "Section"):
            if column not in header:
                raise self._missing(table, column)
        if self.points_row(table) is None:
            raise ImportFileError(
                f"{table.path} has no 'Points Possible' row (the row under the header that "
                f"Canvas writes): {self.export_steps}"
            )

    def points_row(self, table: Table) -> int | None:
        return next((i for i in self._meta_rows(table) if self._is_points(table, i)), None)

    def _is_points(self, table: Table, row: int) -> bool:
        return bool(table.rows[row]) and self.POINTS in table.rows[row][0]

    def _meta_rows(self, table: Table) -> list[int]:
        """The rows between the header and the first student: Points Possible, Manual Posting."""
        out = []
        for i in range(1, len(table.rows)):
            cells = table.rows[i]
            if self._is_points(table, i) or all(self.HIDDEN.match(c) for c in cells):
                out.append(i)
            else:
                break
        return out

    def student_rows(self, table: Table) -> list[int]:
        meta = set(self._meta_rows(table))
        return [i for i in super().student_rows(table) if i not in meta]

    def describe(self, table: Table, row: int) -> str:
        if (column := table.column("Student")) is not None:
            name = table.cell(row, column)
        else:
            last, first = table.column("LastName"), table.column("FirstName")
            name = f"{table.cell(row, last)}, {table.cell(row, first)}"
        login = table.cell(row, table.column("SIS Login ID"))
        return f"{name.strip()} (ID {table.cell(row, table.column('ID'))}, SIS Login ID {login})"

    def score_columns(self, table: Table, titles: set[str]) -> list[int]:
        first = table.column("Section") + 1
        out = []
        for i, header in enumerate(table.header[first:], first):
            found = self.TITLE_ID.match(header)
            if cell_key(found.group(1) if found else header) in titles:
                out.append(i)
        return out

    def set_max(self, table: Table, column: int, max_score: float, added: bool) -> str | None:
        row = self.points_row(table)
        before = table.cell(row, column).strip()
        table.set(row, column, format_score(max_score))
        try:
            had = float(before.replace(",", ".")) if before else None
        except ValueError:
            had = None
        if had is not None and had != round(max_score, 2):
            return (
                f"Canvas had {before} points possible for this assignment: the import makes it "
                f"{format_score(max_score)}, the gradebook's maximum"
            )
        return None


class MoodleLayout(ExportLayout):
    """Moodle's plain text grade export, imported by Grades > Import > CSV file.

    Grades > Export > Plain text file (`grade_export_txt`, grade/export/txt) writes the profile
    fields `First name, Last name, ID number, Institution, Department, Email address` (the site's
    default `grade_export_userprofilefields`), `Suspended` when inactive users are exported, one
    `Item name (Real)` column per grade item (`Module: Name (Real)` for an activity's), and
    `Last downloaded from this course`, a Unix time the import checks. Grades > Import > CSV file
    (`gradeimport_csv_load_data`, grade/import/csv; MoodleDocs "Grade import") identifies users by
    one column mapped to email, ID number, username or user id, and maps each other column to a
    grade item or to a new one named after its header; `-` is no grade (a blank cell in a new
    item's column is not skipped), and a row whose user it cannot find stops the whole import,
    which is why rows are never added.
    """

    name, lms = "moodle", "Moodle"
    EMAIL, IDNUMBER, USERNAME = "Email address", "ID number", "Username"
    identifiers = (EMAIL, IDNUMBER, USERNAME)
    no_score = "-"
    EXPORTED = "Last downloaded from this course"
    REAL = " (Real)"
    import_steps = (
        "In Moodle, open Grades > Import > CSV file, choose this file, identify users by mapping "
        "from 'Email address' to 'Email address' (or 'ID number' to 'ID number'), and map the "
        "assignment's column to its grade item (or to a new grade item)."
    )
    export_steps = (
        "In Moodle, open Grades > Export > Plain text file (with the email address or ID number "
        "among the user fields) and pass the file it gives unchanged."
    )

    def check(self, table: Table) -> None:
        if not {self.EMAIL, self.IDNUMBER, self.USERNAME} & set(table.header):
            raise self._missing(table, self.EMAIL)

    def describe(self, table: Table, row: int) -> str:
        def value(column: str) -> str:
            at = table.column(column)
            return "" if at is None else table.cell(row, at).strip()

        name = " ".join(filter(None, map(value, ("First name", "Last name")))) or f"row {row + 1}"
        keys = [f"{c} {value(c)}" for c in self.identifiers if value(c)]
        return f"{name} ({', '.join(keys)})"

    def score_columns(self, table: Table, titles: set[str]) -> list[int]:
        out = []
        for i, header in enumerate(table.header):
            if not header.endswith(self.REAL):
                continue
            name = header.removesuffix(self.REAL)
            activity = name.split(": ", 1)[-1]  # "Assignment: Name" for an activity's item
            if cell_key(name) in titles or cell_key(activity) in titles:
                out.append(i)
        return out

    def set_max(self, table: Table, column: int, max_score: float, added: bool) -> str | None:
        if added:
            return (
                "the new column makes a new grade item (maximum grade 100): set it to "
                f"{format_score(max_score)} in Moodle after the import"
            )
        return None

    def add_column(self, table: Table, title: str) -> int:
        at = table.column(self.EXPORTED)
        if at is None:
            return super().add_column(table, title)
        table.insert_column(at, title, self.no_score)
        return at


LAYOUTS: dict[str, ExportLayout] = {
    layout.name: layout for layout in (CanvasLayout(), MoodleLayout())
}
