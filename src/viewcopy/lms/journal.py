"""What `viewcopy lms push` sent: `<course>/lms/journal.jsonl`, appended and fsynced.

Each score is written "sending" before its POST and "sent" after the LMS's 2xx, with the whole
payload (its timestamp included). A score still "sending" when a run ended (a crash, an outage)
is sent again by the next run exactly as it was, same timestamp, so the LMS sees one score, not
two; a score already "sent" is never sent again unless it changed. The line item each
assignment's scores go to is remembered here too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from viewcopy.lms.vocabulary import CANVAS_SUBMISSION

JOURNAL_FILE = "journal.jsonl"
SENDING, SENT, REFUSED = "sending", "sent", "refused"


@dataclass(frozen=True)
class Entry:
    """One word on one (line item, LMS user): SENDING, SENT or REFUSED, and the payload."""

    lineitem: str
    user: str
    student: str
    state: str
    payload: dict

    @property
    def timestamp(self) -> str:
        return self.payload["timestamp"]


def unstamped(payload: dict) -> dict:
    """A score as compared between pushes: everything but its timestamp and Canvas's
    submission extension (which says how it was sent, not what the score is)."""
    return {k: v for k, v in payload.items() if k not in ("timestamp", CANVAS_SUBMISSION)}


def now_stamp(after: str | None = None) -> str:
    """An AGS timestamp (ISO 8601, UTC, microseconds), and when `after` is given, in a later
    whole second than it: Moodle refuses (409) a score whose timestamp, in whole seconds, is not
    after the one it holds, so a student's timestamps never go backwards nor share a second."""
    stamp = datetime.now(timezone.utc)
    if after is not None:
        next_second = datetime.fromisoformat(after).replace(microsecond=0) + timedelta(seconds=1)
        stamp = max(stamp, next_second.astimezone(timezone.utc))
    return stamp.isoformat(timespec="microseconds")


class Journal:
    """The course's push journal: read whole when opened, appended one fsynced line at a time."""

    def __init__(self, folder: Path):
        self.path = folder / JOURNAL_FILE
        self.scores: dict[tuple[str, str], Entry] = {}
        self.last_sent: dict[tuple[str, str], Entry] = {}
        self.lineitems: dict[str, str] = {}
        self._read()

    def _read(self) -> None:
        if not self.path.is_file():
            return
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            # a line torn by a crash mid-write (its POST never started): drop it, so the next
            # line appended starts a line of its own
            text = text[: text.rfind("\n") + 1]
            with self.path.open("r+", encoding="utf-8") as journal:
                journal.truncate(len(text.encode("utf-8")))
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise ValueError(
                    f"{self.path} line {number} is not JSON: the journal was edited; restore "
                    "it from a backup, or delete it (the next push then sends every score again)"
                ) from None
            if row.get("kind") == "lineitem":
                self.lineitems[row["assignment"]] = row["id"]
            else:
                entry = Entry(
                    row["lineitem"], row["user"], row["student"], row["state"], row["payload"]
                )
                self._note(entry)

    def pending(self, lineitem: str, user: str) -> Entry | None:
        """A score whose POST started and was never answered: send it again as it was."""
        entry = self.scores.get((lineitem, user))
        return entry if entry is not None and entry.state == SENDING else None

    def sent_payload(self, lineitem: str, user: str) -> dict | None:
        """The last score the LMS accepted for this user, None where none was."""
        entry = self.last_sent.get((lineitem, user))
        return entry.payload if entry is not None else None

    def last_stamp(self, lineitem: str, user: str) -> str | None:
        entry = self.scores.get((lineitem, user))
        return entry.timestamp if entry is not None else None

    def remember_lineitem(self, assignment: str, lineitem: str) -> None:
        self._append({"kind": "lineitem", "assignment": assignment, "id": lineitem})
        self.lineitems[assignment] = lineitem

    def sending(self, lineitem: str, user: str, student: str, payload: dict) -> None:
        self._record(Entry(lineitem, user, student, SENDING, payload))

    def sent(self, lineitem: str, user: str, student: str, payload: dict) -> None:
        self._record(Entry(lineitem, user, student, SENT, payload))

    def refused(self, lineitem: str, user: str, student: str, payload: dict) -> None:
        self._record(Entry(lineitem, user, student, REFUSED, payload))

    def _note(self, entry: Entry) -> None:
        self.scores[(entry.lineitem, entry.user)] = entry
        if entry.state == SENT:
            self.last_sent[(entry.lineitem, entry.user)] = entry

    def _record(self, entry: Entry) -> None:
        self._append(
            {
                "kind": "score",
                "state": entry.state,
                "lineitem": entry.lineitem,
                "user": entry.user,
                "student": entry.student,
                "payload": entry.payload,
                "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
        )
        self._note(entry)

    def _append(self, row: dict) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(row, sort_keys=True) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
