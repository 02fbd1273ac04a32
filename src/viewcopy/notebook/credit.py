"""What every check's credit is built from: its record, the truth-first gate, a part's lock."""

from __future__ import annotations

from collections.abc import Callable

from viewcopy.course.check_record import Credit, encode
from viewcopy.exercise.next_predictions import parsed_sheet
from viewcopy.exercise.part import Key, Part, Prediction, PredictionError
from viewcopy.exercise.predictions import TWENTY
from viewcopy.locking.file import LockError, lock_path
from viewcopy.locking.gate import TRUTH_FIRST
from viewcopy.locking.record import LockRecord
from viewcopy.notebook.context import CheckContext

Assessment = tuple[list[str], list[str], float]
"""What a part's check says of parsed answers: the headline lines, a line per miss, and how far
toward full credit they are (0-1), whatever their lock."""


def proportional(points: float, earned: float, out_of: float) -> float:
    """`points` in proportion to `earned` of `out_of` (to four places); all of them when there
    was nothing to earn."""
    return round(points * earned / out_of, 4) if out_of else float(points)


def record_of(check: Callable, **inputs: object) -> dict:
    """What a check's credit carries: its name and its inputs, encoded (course.check_record)."""
    return {"check": check.__name__, **{name: encode(v) for name, v in inputs.items()}}


def before_reveal(context: CheckContext, record: dict) -> Credit | None:
    """No credit and the sentence that says why, where the context withholds the truth (before
    the twenty's reveal, in the kernel); None where the check may judge."""
    return truth_first(record) if context.withholds_truth() else None


def truth_first(record: dict) -> Credit:
    """No credit, saying the twenty are locked and revealed first (TRUTH_FIRST)."""
    print(TRUTH_FIRST)
    return Credit(0.0, record)


def part_credit(
    part: Part,
    value: object,
    record: dict,
    points: float,
    assess: Callable[[dict[Key, Prediction], LockRecord | None], Assessment],
    context: CheckContext,
) -> Credit:
    """Every part's check: nothing for a sheet not written out, the sheet parsed for this
    hand-in, its lock judged, then the part's own assessment; credit only when locked before
    looking. A twenty that does not parse fails the cell (validate names it); a later part that
    cannot be read earns nothing and says why. Before the twenty's reveal, in the kernel, only
    TRUTH_FIRST (a twenty that does not parse still fails the cell: its problems are the
    sheet's own, nothing measured)."""
    if context.withholds_truth():
        if part is TWENTY:
            part.parse(value, part.keys(context.lock_record()))
        return truth_first(record)
    if (reason := context.not_written(value, part.label)) is not None:
        print(f"{reason}\nCredit: 0/{points:g}")
        return Credit(0.0, record)
    lock_record = context.lock_record()
    try:
        parsed = parsed_sheet(part, value, lock_record, lock_path(context.folder))
    except (LockError, PredictionError) as exc:
        if part is TWENTY:
            raise
        print(f"{exc}\nCredit: 0/{points:g}")
        return Credit(0.0, record)
    lock = context.lock_status(part, parsed, lock_record)
    headline, misses, share = assess(parsed, lock_record)
    print("\n".join([*headline, lock.reason, *misses]))
    credit = round(points * share, 4) if lock.counts else 0.0
    print(f"Credit: {credit:g}/{points:g}")
    return Credit(credit, record)
