"""A notebook handed in without its lock file keeps its lock: the lock and reveal cells' outputs
carry the lock record, and autograde puts it back beside the notebook before the kernel runs.

nbgrader clears every output before it executes a hand-in, so the record is taken in two steps:
`KeepHandedInLock` (a sanitize step, before ClearOutput) moves the record from the outputs into
the notebook's metadata, and `PlaceHandedInLock` (an autograde step, before Execute) writes it as
the lock file of the autograded copy when the hand-in had none. A record is worth what a lock
file is: the grader checks its fingerprint, and its receipts when the course runs a lock service.
"""

from __future__ import annotations

from pathlib import Path

from viewcopy.files.atomic import write_once
from viewcopy.locking.file import lock_file_text
from viewcopy.locking.record import LOCK_FILE
from viewcopy.locking.recover import lock_in_outputs
from viewcopy.plugins.base import CoursePreprocessor

STASH = "viewcopy_handed_in_lock"
"""The notebook metadata key that carries the record from sanitizing to autograding."""


class KeepHandedInLock(CoursePreprocessor):
    """Sanitize: keep the lock record of a hand-in that has no lock file (nothing otherwise)."""

    def preprocess(self, nb, resources):
        nb.metadata.pop(STASH, None)  # only what this step finds in the outputs is carried
        folder = Path(resources["metadata"]["path"])
        if not (folder / LOCK_FILE).exists() and (record := lock_in_outputs(nb)) is not None:
            nb.metadata[STASH] = record
        return nb, resources


class PlaceHandedInLock(CoursePreprocessor):
    """Autograde: write the kept record as the autograded copy's lock file, if it has none."""

    def preprocess(self, nb, resources):
        record = nb.metadata.pop(STASH, None)
        path = Path(resources["metadata"]["path"]) / LOCK_FILE
        if isinstance(record, dict):  # a lock file already there is the hand-in's: kept
            write_once(path, lock_file_text(record))
        return nb, resources
