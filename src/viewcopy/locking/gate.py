"""Nothing the notebook offers shows a measured verdict before the twenty are locked and revealed.

The twenty may be re-locked until their reveal, so the reveal (not the lock) is where the truth
may first be shown: a call that would measure before it answers `TRUTH_FIRST` instead. The
grader sees everything (`nbgrader autograde` hides nothing: the deadline has passed), and the
instructor's `viewcopy key` command is not a notebook call.
"""

from __future__ import annotations

from viewcopy.locking.file import Folder, autograding, read_lock
from viewcopy.locking.recover import restore

TRUTH_FIRST = (
    "This cell shows what was measured, so it comes after your lock: lock PREDICTIONS "
    "(viewcopy.lock) and reveal them (viewcopy.reveal) in the cells above, then run this cell "
    "again. Until the reveal you may still change and re-lock your predictions."
)
"""What a call that would show measured verdicts says before the reveal of the twenty."""


def truth_shown(directory: Folder = None) -> bool:
    """True once the twenty's lock beside the notebook (restored from the notebook's outputs
    where the file was lost) has been revealed, and always when autograding."""
    if autograding():
        return True
    restore(directory)
    record = read_lock(directory)
    return record is not None and record.revealed_at is not None


class TruthFirst:
    """What a gated call returns before the reveal: the sentence, as text and as HTML."""

    def __repr__(self) -> str:
        return TRUTH_FIRST

    def _repr_html_(self) -> str:
        return f"<p><b>Not yet.</b> {TRUTH_FIRST}</p>"
