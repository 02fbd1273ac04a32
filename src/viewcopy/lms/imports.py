"""The LMS's own gradebook import file (`viewcopy lms csv`): for a course without LTI admin
rights, the assignment's scores merged into the gradebook export the LMS itself gives, so the
ids come from the LMS, in the layout that LMS imports.

Students are matched by login or email, trimmed and case-insensitive: an LMS row and a
gradebook student match when one of the row's identifier columns holds the student's gradebook
id (the hub name: an LMS login or sub), their nbgrader `lms_user_id` or their email. A row or a
student that matches more than one is ambiguous: named, never guessed. Every row and column of
the export is kept; only the assignment's cells of matched students change, each to the score
course.class_scores gives (the push's and the class report's number). A student with no score to
give (no graded hand-in, or a grading that failed or was interrupted) keeps the cell the export
had, so the import changes nothing for them (in both LMSs a blank cell over a score can clear
it).

The layouts followed, read in each LMS's own code and guides:

- Canvas: Grades > Export as Canvas writes it (instructure/canvas-lms, `GradebookExporter`,
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
- Moodle: Grades > Export > Plain text file (`grade_export_txt`, grade/export/txt): the profile
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

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.course.class_scores import GradebookScore, NoScores, class_scores, format_score
from viewcopy.five.questions import question_number
from viewcopy.grading.record import not_graded
from viewcopy.lms.csv_table import Table, cell_key
from viewcopy.lms.errors import ImportFileError
from viewcopy.lms.tool import LAB_TITLE


def column_title(assignment: str) -> str:
    """The title of an assignment's column: the lab's own title for the lab."""
    return LAB_TITLE if assignment == ASSIGNMENT else assignment


class Layout:
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


class Canvas(Layout):
    """Canvas's Grades > Export CSV, imported by Grades > Import."""

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


class Moodle(Layout):
    """Moodle's plain text grade export, imported by Grades > Import > CSV file."""

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


LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in (Canvas(), Moodle())}


@dataclass(frozen=True)
class ClassScores:
    """The assignment's scores (course.class_scores), and why each hand-in whose last grading
    failed or was interrupted has none to give (grading.record.not_graded)."""

    assignment: str
    max_score: float
    students: dict[str, GradebookScore]
    failed: dict[str, str]

    def to_write(self, student_id: str) -> float | None:
        """The score the import file gets for the student, None to leave the LMS's cell."""
        if student_id in self.failed:
            return None
        return self.students[student_id].score


def read_scores(course: Path, assignment: str) -> ClassScores:
    """Every student's score, pending hand grading and failed grading, from the course."""
    try:
        max_score, students = class_scores(Path(course), assignment)
    except NoScores as exc:
        raise ImportFileError(str(exc)) from None
    failed = not_graded(Path(course), assignment)
    for student_id in failed.keys() - students.keys():
        students[student_id] = GradebookScore(student_id)
    return ClassScores(assignment, max_score, students, failed)


def _keys(student: GradebookScore) -> set[str]:
    """The values an LMS row may name the student by: id, email, LMS user id."""
    ids = (student.student_id, student.email, student.lms_user_id)
    return {k for k in map(cell_key, ids) if k}


@dataclass(frozen=True)
class Match:
    """An LMS row and the one gradebook student it belongs to, and the column that said so."""

    row: int
    student: str
    column: str


@dataclass(frozen=True)
class Ambiguous:
    """Rows and students that share identifiers in more than one way: none of them is written."""

    rows: tuple[int, ...]
    students: tuple[str, ...]


@dataclass(frozen=True)
class Matching:
    matches: tuple[Match, ...] = ()
    ambiguous: tuple[Ambiguous, ...] = ()
    lms_only: tuple[int, ...] = ()
    gradebook_only: tuple[str, ...] = ()


def match(rows: dict[int, dict[str, str]], students: Iterable[GradebookScore]) -> Matching:
    """Pair rows (row -> {column: value}) with students: a row and a student that share a
    trimmed, case-insensitive value and nothing else match; a group of rows and students tied
    by shared values with more than one on either side is ambiguous."""
    students = list(students)
    edges: dict[int, dict[str, str]] = {r: {} for r in rows}  # row -> student -> column
    for r, cells in rows.items():
        values = {cell_key(v): column for column, v in cells.items() if cell_key(v)}
        for s in students:
            if shared := _keys(s) & values.keys():
                edges[r][s.student_id] = values[min(shared)]
    by_student: dict[str, set[int]] = {s.student_id: set() for s in students}
    for r, found in edges.items():
        for s in found:
            by_student[s].add(r)
    matches, ambiguous, seen = [], [], set()
    for r in sorted(rows):
        if r in seen or not edges[r]:
            continue
        group_rows, group_students, todo = {r}, set(), [r]
        while todo:  # the rows and students tied to this row, however indirectly
            for s in edges[todo.pop()]:
                if s not in group_students:
                    group_students.add(s)
                    new = by_student[s] - group_rows
                    group_rows |= new
                    todo.extend(new)
        seen |= group_rows
        if len(group_rows) == 1 and len(group_students) == 1:
            (s,) = group_students
            matches.append(Match(r, s, edges[r][s]))
        else:
            ambiguous.append(Ambiguous(tuple(sorted(group_rows)), tuple(sorted(group_students))))
    return Matching(
        tuple(matches),
        tuple(ambiguous),
        tuple(r for r in sorted(rows) if not edges[r]),
        tuple(sorted(s for s, found in by_student.items() if not found)),
    )


@dataclass(frozen=True)
class MergeResult:
    """The import file, and who got a score and who did not, and why."""

    layout: Layout
    export: Path
    column: str
    """The header of the assignment's column in the import file."""
    added: bool
    """The column is new (the LMS makes an assignment of it)."""
    table: Table
    scores: ClassScores
    matching: Matching
    written: dict[str, str]
    """Student id -> the score written."""
    notes: tuple[str, ...] = field(default=())

    def write(self, out: Path) -> Path:
        out = Path(out)
        if out.resolve() == self.export.resolve():
            raise ImportFileError(
                f"{out} is the export itself: write the import file beside it (--out another file)"
            )
        self.table.write(out)
        return out

    def summary(self) -> str:
        students = self.scores.students
        by = {m.student: m.column for m in self.matching.matches}
        columns = sorted({by[s] for s in self.written})
        counts = ", ".join(f"{sum(by[s] == c for s in self.written)} by {c}" for c in columns)
        lines = [
            f"{self.layout.lms} import file from {self.export.name}: column {self.column!r}"
            f"{' (new)' if self.added else ''}, {format_score(self.scores.max_score)} points",
            f"  {len(self.written)} score{_s(len(self.written))} written"
            + (f" (matched {counts})" if counts else ""),
            *self.notes,
        ]
        if pending := [s for s in self.written if students[s].pending]:
            cells = {c for s in pending for c in students[s].pending}
            have = "has" if len(pending) == 1 else "have"
            lines.append(
                f"  {len(pending)} student{_s(len(pending))} {have} {_cells(cells)} not yet "
                f"hand-graded ({', '.join(sorted(pending))}): their totals count what is graded "
                "so far"
            )
        lines += _section(
            "Matched, no score written (the LMS keeps what it has):",
            [
                f"{s}: {self.scores.failed.get(s) or 'no graded hand-in'}"
                for s in sorted(by)
                if s not in self.written
            ],
        )
        lines += _section(
            f"In {self.layout.lms}, not in the gradebook (left as they were):",
            [self.layout.describe(self.table, r) for r in self.matching.lms_only],
        )
        lines += _section(
            f"In the gradebook, not in the {self.layout.lms} export (not in the file):",
            [_gradebook_line(self.scores, s) for s in self.matching.gradebook_only],
        )
        lines += _section(
            "Ambiguous, never guessed (left as they were):",
            [
                f"{', '.join(a.students)} and {len(a.rows)} row{_s(len(a.rows))}: "
                + "; ".join(self.layout.describe(self.table, r) for r in a.rows)
                for a in self.matching.ambiguous
            ],
        )
        lines.append(self.layout.import_steps)
        return "\n".join(lines)


def merge_scores(
    course: Path,
    assignment: str,
    export: Path,
    layout: str,
    *,
    title: str | None = None,
) -> MergeResult:
    """The import file for `layout` ("canvas" or "moodle"): `export` with the assignment's
    column (found by `title`, the assignment's name or the lab's title, else added) holding each
    matched student's gradebook total."""
    if layout not in LAYOUTS:
        raise ImportFileError(f"no LMS layout {layout!r}: one of {', '.join(LAYOUTS)}")
    lms = LAYOUTS[layout]
    table = Table.read(Path(export), lms.lms)
    lms.check(table)
    scores = read_scores(Path(course), assignment)
    title = title or column_title(assignment)
    titles = {cell_key(t) for t in (title, assignment, assignment.replace("_", " "))}
    found = lms.score_columns(table, titles)
    if len(found) > 1:
        named = ", ".join(repr(table.header[c]) for c in found)
        raise ImportFileError(
            f"{table.path} has {len(found)} columns for {assignment}: {named}; rename all but "
            f"one in {lms.lms} and export again"
        )
    column = found[0] if found else lms.add_column(table, title)
    notes = [f"  {n}" for n in [lms.set_max(table, column, scores.max_score, not found)] if n]
    rows = {
        r: {c: table.cell(r, i) for c in lms.identifiers if (i := table.column(c)) is not None}
        for r in lms.student_rows(table)
    }
    matching = match(rows, scores.students.values())
    written = {}
    for m in matching.matches:
        if (score := scores.to_write(m.student)) is not None:
            written[m.student] = format_score(score)
            table.set(m.row, column, written[m.student])
    return MergeResult(
        lms,
        Path(export),
        table.header[column],
        not found,
        table,
        scores,
        matching,
        written,
        tuple(notes),
    )


def default_out(export: Path, assignment: str) -> Path:
    """Where the import file goes unless told: beside the export, named for the assignment."""
    export = Path(export)
    return export.with_name(f"{export.stem}.{assignment}.import.csv")


def _cells(names: Iterable[str]) -> str:
    """Pending grade cells as the instructor knows them: answers 21-25, else their names."""
    names = sorted(set(names))
    if all(question_number(n) is not None for n in names):
        numbers = sorted(question_number(n) for n in names)
        if len(numbers) == 1:
            return f"answer {numbers[0]}"
        if numbers == list(range(numbers[0], numbers[-1] + 1)):
            return f"answers {numbers[0]}-{numbers[-1]}"
        return "answers " + ", ".join(map(str, numbers))
    return "grade cells " + ", ".join(names)


def _gradebook_line(scores: ClassScores, student_id: str) -> str:
    student = scores.students[student_id]
    said = [student.name] if student.name else []
    said += [student.email] if student.email else []
    if student_id in scores.failed:
        said.append(scores.failed[student_id])
    elif student.score is None:
        said.append("no graded hand-in")
    else:
        said.append(f"score {format_score(student.score)}")
    return f"{student_id} ({', '.join(said)})"


def _section(title: str, lines: Sequence[str]) -> list[str]:
    return [title, *(f"  {line}" for line in lines)] if lines else []


def _s(n: int) -> str:
    return "" if n == 1 else "s"
