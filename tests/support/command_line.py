"""The `viewcopy` command as a user types it: the console script of this environment, in a process
of its own (tests/commands/, one module per command; conftest's `viewcopy` fixture runs the same
`main` in this process, which is faster)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

VIEWCOPY = Path(sys.executable).with_name("viewcopy")
"""The console script pip installed beside this Python (`.venv/bin/viewcopy`)."""


def installed_viewcopy(*args: str, **options) -> subprocess.CompletedProcess:
    """The console script itself, in its own process, as an instructor types it, with the
    environment's bin folder first on PATH (as scripts/demo.sh and an activated venv put it)."""
    env = {**os.environ, **options.pop("env", {})}
    env["PATH"] = f"{VIEWCOPY.parent}{os.pathsep}{env.get('PATH', '')}"
    command = [str(VIEWCOPY), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, **options)


def assert_one_line_usage_error(done: subprocess.CompletedProcess, says: str) -> None:
    """Exit status 2, nothing on stdout, and one line on stderr that says `says`, no traceback."""
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr
    assert "Traceback" not in done.stderr


def started_from_a_terminal(command: list[str], cwd: Path | None = None) -> subprocess.Popen:
    """`command` in a process of its own (in `cwd`) that Ctrl-C reaches as a terminal delivers
    it; what it prints, stdout and stderr together, readable as text from its stdout."""
    return subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )


def _as_from_a_terminal() -> None:
    """SIGINT back to its default: a test run started in the background (`cmd &`, nohup) ignores
    SIGINT, and a child inherits that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
