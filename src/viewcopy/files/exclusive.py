"""One writer at a time: an exclusive lock on a lock file beside what is read, changed and
published (`fcntl.flock`, released when the block ends or the process dies)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusively(lock_file: Path) -> Iterator[None]:
    """Hold `lock_file`'s lock (the file made if missing) for the block."""
    with open(lock_file, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
