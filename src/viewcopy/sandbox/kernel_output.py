"""What a kernel writes to its own stdout and stderr (not its cells' output, which ipykernel sends
to the grader as messages): relayed into the grading worker's log as the kernel's words, never
as the grader's. Each line is prefixed, control characters are escaped (no escape sequence
rewrites the instructor's terminal), blank lines are dropped, and a kernel's share of the log is
capped."""

from __future__ import annotations

import os
import select
import threading
import time
from typing import TextIO

PREFIX = "kernel | "
CAP_BYTES = 64 * 2**10
"""What one kernel may put in the log; the rest is counted, not shown."""
DRAIN_S = 2.0
"""How long, once the kernel has ended, what it wrote last is still read."""


def said(line: bytes) -> str:
    """One line as the log shows it: the kernel's prefix, every control character escaped."""
    text = line.decode("utf-8", errors="backslashreplace")
    shown = "".join(
        c if c.isprintable() or c == "\t" else c.encode("unicode_escape").decode() for c in text
    )
    return f"{PREFIX}{shown}\n"


class Relay:
    """One kernel's output, fed in chunks, written to `sink` a whole line at a time."""

    def __init__(self, sink: TextIO):
        self.sink = sink
        self.shown = self.hidden = 0
        self.pending = b""

    def feed(self, chunk: bytes) -> None:
        lines = (self.pending + chunk).split(b"\n")
        self.pending = lines.pop()
        for line in lines:
            self._line(line)
        self.sink.flush()

    def finish(self) -> None:
        if self.pending:
            self._line(self.pending)
        if self.hidden:
            self.sink.write(
                f"{PREFIX}... {self.hidden} more bytes not shown (past {CAP_BYTES} bytes)\n"
            )
        self.sink.flush()

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        if self.shown + len(line) <= CAP_BYTES:
            self.shown += len(line)
            self.sink.write(said(line))
        else:
            self.hidden += len(line) + 1


def relay(fd: int, sink: TextIO, until: int | None = None) -> None:
    """Read `fd` to its end (the kernel and all it started have closed it), or, given `until`
    (a pidfd of the kernel), until the kernel has ended and DRAIN_S has passed, and write what it
    says to `sink` as the kernel's; close `fd`. Needs no thread: a process that has joined a
    sandbox's pid namespace may not start one."""
    out = Relay(sink)
    watched = [fd] if until is None else [fd, until]
    deadline = None
    try:
        while deadline is None or (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(watched, [], [], None if deadline is None else left)
            if until in ready:
                watched.remove(until)
                deadline = time.monotonic() + DRAIN_S
            if fd in ready:
                if not (chunk := os.read(fd, 65536)):
                    break
                out.feed(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
        out.finish()


def relaying(sink: TextIO) -> int:
    """A pipe whose reading end a thread relays to `sink`: give the kernel the writing end (as
    its stdout and stderr) and close it here once the kernel has it."""
    readable, writable = os.pipe()
    threading.Thread(target=relay, args=(readable, sink), daemon=True).start()
    return writable
