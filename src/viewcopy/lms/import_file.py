"""The LMS's own gradebook import file (`viewcopy lms csv`, for a course without LTI rights):
the LMS's export with the assignment's column holding each matched student's score, its name,
where it is written, and what the merge says."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.course.class_scores import format_score
from viewcopy.course.folder import Course
from viewcopy.five.questions import question_number
from viewcopy.lms.csv_table import Table, cell_key
from viewcopy.lms.errors import ImportFileError
from viewcopy.lms.export_layouts import LAYOUTS, ExportLayout
from viewcopy.lms.import_scores import ClassScores, read_scores
from viewcopy.lms.student_matching import Matching, match
from viewcopy.lms.tool import LAB_TITLE


def column_title(assignment: str) -> str:
    """The title of an assignment's column: the lab's own title for the lab."""
    return LAB_TITLE if assignment == ASSIGNMENT else assignment


def default_out(export: Path, assignment: str) -> Path:
    """Where the import file goes unless told: beside the export, named for the assignment."""
    export = Path(export)
    return export.with_name(f"{export.stem}.{assignment}.import.csv")


@dataclass(frozen=True)
class MergeResult:
    """The import file, and who got a score and who did not, and why."""

    layout: ExportLayout
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
        """The import file at `out`, never over the export it came from."""
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
    course: Course,
    assignment: str,
    export: Path,
    layout: str,
    *,
    title: str | None = None,
) -> MergeResult:
    """The import file for `layout` ("canvas" or "moodle"): `export` with the assignment's
    column (found by `title`, the assignment's name or the lab's title, else added) holding each
    matched student's gradebook total.

    The ids come from the LMS, in the layout that LMS imports: every row and column of the
    export is kept; only the assignment's cells of matched students (lms.student_matching)
    change, each to the score lms.import_scores gives, and a student with none keeps the
    cell the export had."""
    if layout not in LAYOUTS:
        raise ImportFileError(f"no LMS layout {layout!r}: one of {', '.join(LAYOUTS)}")
    lms = LAYOUTS[layout]
    table = Table.read(Path(export), lms.lms)
    lms.check(table)
    scores = read_scores(course, assignment)
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
