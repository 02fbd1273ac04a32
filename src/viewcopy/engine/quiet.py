"""Keeping graded cells silent: torch's profiler writes `USDT:` lines straight to file descriptor 2.

nbgrader scores a test cell 0 when it writes anything to stderr, so the profiler runs with
descriptor 2 pointed at a temporary file; what it wrote is returned, not printed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def captured_fd2() -> Iterator[list[str]]:
    """Send everything written to descriptor 2 into the yielded list (filled on exit)."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode(errors="replace").splitlines())
