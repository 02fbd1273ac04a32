"""What a kernel writes to its own stdout and stderr reaches the worker's log as the kernel's
(viewcopy.sandbox.kernel_output); the whole path, from a hostile hand-in to the log, is in
test_hostile.py."""

from __future__ import annotations

import io
import os
import threading

from viewcopy.sandbox import kernel_output


def relayed(data: bytes) -> str:
    """What the log shows of `data`, written by a kernel that then ended."""
    readable, writable = os.pipe()
    sink = io.StringIO()
    relay = threading.Thread(target=kernel_output.relay, args=(readable, sink))
    relay.start()
    os.write(writable, data)
    os.close(writable)
    relay.join()
    return sink.getvalue()


def test_each_line_is_the_kernels_with_control_characters_escaped():
    shown = relayed(b"\x1b[2Kviewcopy grade: all graded\r\nplain\ttabbed\n\xff\x07last")
    assert shown.splitlines() == [
        "kernel | \\x1b[2Kviewcopy grade: all graded\\r",
        "kernel | plain\ttabbed",
        "kernel | \\xff\\x07last",
    ]
    assert "\x1b" not in shown and "\r" not in shown


def test_a_kernels_share_of_the_log_is_capped_and_the_rest_counted():
    line = b"y" * 1023 + b"\n"
    shown = relayed(line * 100).splitlines()
    kept = kernel_output.CAP_BYTES // 1023
    assert shown[:kept] == ["kernel | " + "y" * 1023] * kept
    assert shown[kept:] == [
        f"kernel | ... {(100 - kept) * 1024} more bytes not shown "
        f"(past {kernel_output.CAP_BYTES} bytes)"
    ]
