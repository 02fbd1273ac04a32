"""Each LTI launch is taken once: the login state and the id_token nonce it spent, remembered on
the hub (`<course>/lms/spent_launches.sqlite`) until neither could be accepted again.

The browser's state and nonce cookies are cleared after a launch, but whoever holds a copy of
the launch (the POSTed id_token and state, the cookies) could send it again; IMS Security
Framework 1.0 (5.1.3) asks the tool to accept each nonce once. SQLite keeps the record across a
hub restart and takes one launch's spending as one transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

SPENT_FILE = "spent_launches.sqlite"


class AlreadySpent(ValueError):
    """A launch whose state or nonce was taken before: a replay."""


class SpentLaunches:
    """The states and nonces launches spent, each kept until its `until` (epoch seconds)."""

    def __init__(self, path: Path):
        self.path = path
        with self._connected() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS spent "
                "(kind TEXT, value TEXT, until REAL, PRIMARY KEY (kind, value))"
            )

    def spend(self, values: Mapping[str, str], until: float) -> None:
        """Record each `kind: value` as spent until `until`; AlreadySpent (naming the kind) where
        one was spent before and nothing recorded then."""
        with self._connected() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM spent WHERE until < ?", (time.time(),))
            for kind, value in values.items():
                seen = db.execute(
                    "SELECT 1 FROM spent WHERE kind = ? AND value = ?", (kind, value)
                ).fetchone()
                if seen:
                    db.execute("ROLLBACK")
                    raise AlreadySpent(kind)
            db.executemany(
                "INSERT INTO spent VALUES (?, ?, ?)",
                [(kind, value, until) for kind, value in values.items()],
            )
            db.execute("COMMIT")

    @contextlib.contextmanager
    def _connected(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            yield db
        finally:
            db.close()
