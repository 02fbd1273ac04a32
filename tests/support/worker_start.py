"""What a grading process finds when it starts (a target for grading.worker.worker_context's
processes: it must be importable by name in the child)."""

from __future__ import annotations

import os
import sys

PRELOADED = ("torch", "nbgrader.apps", "viewcopy.plugins", "viewcopy.notebook.checks")
"""What every worker imports, its grader's own verdict's checks included."""


def report(connection) -> None:
    """Send back this process's parent and which of every worker's imports are done already."""
    imported = [m for m in PRELOADED if m in sys.modules]
    connection.send((os.getppid(), imported))
    connection.close()


def linger(connection) -> None:
    """A worker that lets its fork server go, as every grading worker does, says its pid and
    never ends by itself."""
    import time

    from viewcopy.grading.worker import leave_the_fork_server

    leave_the_fork_server()
    connection.send(os.getpid())
    time.sleep(600)
