"""A lock lost with the files beside the notebook (a Colab runtime reset, a deleted lock file, the
notebook moved to another folder or machine), found again in the notebook itself: the lock and
reveal cells carry the record in their outputs, and the front end still has them.

The record found is restored as it was (its times, its draw of next ops, its receipts), so running
all cells again keeps every part the student locked. Where the notebook shows a lock that cannot
be restored, the next lock is marked as made after a reveal already seen (`LockRecord.lost_lock`)
and counts for nothing; where the notebook cannot be read at all, the lock cell says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from viewcopy.locking.canonical import matches
from viewcopy.locking.file import Folder, autograding, folder_of, is_master_folder, lock_path, save
from viewcopy.locking.own_notebook import OwnNotebook, own_notebook
from viewcopy.locking.record import LOCK_FILE, OUTPUT_KEY, LockRecord, record_from_json


def lock_in_outputs(notebook: Mapping) -> dict | None:
    """The lock record the last lock or reveal output carries (a notebook handed in without its
    lock file, as Colab downloads it, still holds it there), None when none does."""
    found = None
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else ():
            record = output.get("metadata", {}).get(OUTPUT_KEY)
            found = record if isinstance(record, dict) else found
    return found


@dataclass(frozen=True)
class Recovery:
    """What looking for a lost lock found: the `record` restored (from `source`), or why a lock the
    notebook shows could not be restored (`lost`), or why the notebook could not be read to look
    (`unread`); all empty: the notebook holds no lock, so nothing was lost."""

    record: LockRecord | None = None
    source: str = ""
    lost: str = ""
    unread: str = ""

    def note(self) -> str:
        """What the lock cell tells the student, "" when nothing was lost."""
        if self.record is not None:
            return (
                f"{LOCK_FILE} was missing beside the notebook: restored the lock of "
                f"{self.record.locked_at} from {self.source} ({_parts(self.record)}). "
                "Nothing you locked is lost."
            )
        if self.lost:
            return (
                f"{LOCK_FILE} is missing and the lock {self.source} shows cannot be restored: "
                f"{self.lost}. A lock made now comes after a reveal you have seen and counts for "
                f"nothing. To keep your credit, put {LOCK_FILE} back beside the notebook (or "
                "open a copy of the notebook whose lock cell still shows its output) and run "
                "the cells again; otherwise ask your instructor."
            )
        if self.unread:
            return (
                f"No {LOCK_FILE} beside the notebook, and its outputs could not be searched for an "
                f"earlier lock: {self.unread}. If you locked before in another session, that lock "
                f"is not restored: put {LOCK_FILE} back beside the notebook before going on."
            )
        return ""


def recover(notebook: OwnNotebook) -> Recovery:
    """The lock record `notebook` carries, as a Recovery."""
    if notebook.content is None:
        return Recovery(source=notebook.source, unread=notebook.problem)
    data = lock_in_outputs(notebook.content)
    if data is None:
        return Recovery(source=notebook.source)
    try:
        record = record_from_json(data)
    except ValueError as exc:
        return Recovery(source=notebook.source, lost=f"it is not a lock this lab wrote ({exc})")
    if not matches(record.predictions, record.fingerprint):
        return Recovery(
            source=notebook.source, lost="its fingerprint does not match the predictions it holds"
        )
    return Recovery(record, notebook.source)


def restore(directory: Folder = None) -> Recovery | None:
    """Where the lock file is missing (outside autograde and the instructor's master), look for
    the lock in the kernel's own notebook and write it back beside the notebook when found;
    None when there is nothing to look for."""
    if autograding() or is_master_folder(folder_of(directory)) or lock_path(directory).exists():
        return None
    recovery = recover(own_notebook())
    if recovery.record is not None:
        save(recovery.record, directory)
    return recovery


def _parts(record: LockRecord) -> str:
    """Which parts a record holds, and which of them were revealed."""
    return ", ".join(
        f"{key} {'revealed' if lock.revealed_at else 'locked'}"
        for key, lock in record.parts().items()
    )
