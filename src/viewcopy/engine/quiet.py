"""Keeping graded cells silent: torch's profiler library (kineto) writes its log lines straight to
file descriptor 2 (`USDT:` and `STAGE:` lines, and on a CUDA build without a GPU
`ERROR: ... gpuGetDeviceCount failed with code 35`).

nbgrader scores a test cell 0 when it writes anything to stderr, so the profiler runs with
descriptor 2 pointed at a temporary file; what it wrote is returned, not printed.
"""

from __future__ import annotations

import os
import re
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


PROFILER_LINE = re.compile(
    r"^(?:[A-Z]+:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ \w+\.(?:cpp|h):\d+\] "
    r"|\[[WIEF][\d .:]* \S*(?:kineto|profiler)\S*\.(?:cpp|h):\d+\] )"
)
"""kineto's log format (`SEVERITY:date time pid:tid File.cpp:N] ...`), and c10's warnings from
torch's profiler sources (`[W kineto_shim.cpp:N] ...`)."""


def not_the_profilers(lines: list[str]) -> list[str]:
    """The captured lines that the profiler library did not write (the script's own)."""
    return [line for line in lines if not PROFILER_LINE.match(line)]
