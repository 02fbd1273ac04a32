"""What a kernel writes to its own stdout and stderr (not its cells' output, which ipykernel sends
to the grader as messages): relayed into the grading worker's log as the kernel's words, never
as the grader's. Each line is prefixed, control characters are escaped (no escape sequence
rewrites the instructor's terminal), and a kernel's share of the log is capped."""

from __future__ import annotations

import os
import threading
from typing import TextIO

PREFIX = "kernel | "
CAP_BYTES = 64 * 2**10
"""What one kernel may put in the log; the rest is counted, not shown."""


def said(line: bytes) -> str:
    """One line as the log shows it: the kernel's prefix, every control character escaped."""
    text = line.decode("utf-8", errors="backslashreplace")
    shown = "".join(
        c if c.isprintable() or c == "\t" else c.encode("unicode_escape").decode() for c in text
    )
    return f"{PREFIX}{shown}\n"


def relay(fd: int, sink: TextIO) -> None:
    """Read `fd` to its end (the kernel and all it started have closed it) and write what it
    says to `sink`, line by line, as the kernel's; close `fd`."""
    shown, hidden, pending = 0, 0, b""
    try:
        while chunk := os.read(fd, 65536):
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if shown + len(line) <= CAP_BYTES:
                    shown += len(line)
                    sink.write(said(line))
                else:
                    hidden += len(line) + 1
            sink.flush()
    except OSError:
        pass
    finally:
        os.close(fd)
    if pending:
        sink.write(said(pending))
    if hidden:
        sink.write(f"{PREFIX}... {hidden} more bytes not shown (past {CAP_BYTES} bytes)\n")
    sink.flush()


def relaying(sink: TextIO) -> tuple[int, threading.Thread]:
    """A pipe whose reading end a thread relays to `sink`: give the kernel the writing end (as
    its stdout and stderr) and close it here once the kernel has it."""
    readable, writable = os.pipe()
    thread = threading.Thread(target=relay, args=(readable, sink), daemon=True)
    thread.start()
    return writable, thread
