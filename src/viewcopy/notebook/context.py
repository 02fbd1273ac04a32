"""Where a check judges: the student's kernel (`KERNEL`) or the grader (`CheckContext.grader`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from viewcopy.exercise.part import Key, Part, Prediction
from viewcopy.exercise.written import ComputedSheet, unwritten_reason
from viewcopy.locking.file import autograding, read_lock
from viewcopy.locking.flow import LockStatus, part_status
from viewcopy.locking.gate import truth_shown
from viewcopy.locking.record import LockRecord

LockJudge = Callable[[Part, Mapping[Key, Prediction]], LockStatus]
"""Where a part's parsed answers stand against the lock the grader can prove."""


@dataclass(frozen=True)
class CheckContext:
    """Where a check judges, passed to it explicitly.

    In the student's kernel (`KERNEL`, the default of every check, so a graded cell passes
    nothing): the lock file beside the notebook decides, IPython's input history says whether a
    sheet was written out, and missed items' diagrams are drawn. In the grader (`grader`): the
    hand-in's lock file in `folder`, each part's lock judged by `judge` as the course judges it
    (its lock service, when it runs one), the sheets the hand-in's answer cells write out (the
    grader passes them, so no history is asked), and nothing drawn.
    """

    judge: LockJudge | None = None
    """The grader's judgment of a part's lock; None in the kernel."""
    folder: Path | None = None
    """The folder of the lock file; None: the kernel's own, beside the notebook."""

    @classmethod
    def grader(cls, judge: LockJudge, folder: Path | None = None) -> CheckContext:
        """The grader's context for the hand-in whose lock file is in `folder`."""
        return cls(judge, folder)

    @property
    def in_kernel(self) -> bool:
        return self.judge is None

    def lock_record(self) -> LockRecord | None:
        """The lock a check judges by: the hand-in's (in the grader), else the kernel's."""
        return read_lock(self.folder)

    def lock_status(
        self, part: Part, parsed: Mapping[Key, Prediction], record: LockRecord | None
    ) -> LockStatus:
        """Where a part's parsed answers stand against its lock."""
        if self.judge is None:
            return part_status(part, parsed, record)
        return self.judge(part, parsed)

    @property
    def before_deadline(self) -> bool:
        """True in the student's own kernel (neither the grader nor autograde): where a part not
        done yet is said, not scored."""
        return self.in_kernel and not autograding()

    def withholds_truth(self) -> bool:
        """True in the student's kernel before the twenty's reveal: a check would show measured
        verdicts (the grader's context never withholds)."""
        return self.in_kernel and not truth_shown(self.folder)

    def not_written(self, value: object, name: str) -> str | None:
        """Why `value` is not a sheet written out in its answer cell: the grader says so (it
        read the hand-in's cell and passes a ComputedSheet), or, in the kernel, IPython's input
        history does."""
        if isinstance(value, ComputedSheet):
            return value.reason
        return unwritten_reason(value, name) if self.in_kernel else None


KERNEL = CheckContext()
"""The context of a check run by a graded cell in the student's kernel."""


def local_lock(folder: Path) -> LockJudge:
    """The lock file in `folder` (a hand-in's copy) decides, as it does in the kernel."""
    return lambda part, parsed: part_status(part, parsed, read_lock(folder))
