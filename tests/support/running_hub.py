"""`viewcopy hub` started by a test as an instructor starts it: its process, what it printed and
the state it runs on; stopped as Ctrl-C stops it (JupyterHub runs in a session of its own, so
killing the launcher would leave it, its proxy and the lock service running)."""

from __future__ import annotations

import importlib.util
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.chromium import require_chromium, unavailable
from support.command_line import started_from_a_terminal
from support.course_notebook import ROOT

from viewcopy.hub.permissions import closed_to_others
from viewcopy.hub.state import HubState, find_proxy, students_reach

START_S = 600  # the first start builds the course and releases it
STOP_S = 120


def require_hub(required_by: str) -> None:
    """JupyterHub, its proxy, Playwright and Chromium, and a Python every person's server can
    run, or skip; fail instead where the environment variable `required_by` is 1 (CI)."""
    if importlib.util.find_spec("jupyterhub") is None:
        unavailable("jupyterhub is not installed (scripts/setup.sh installs it)", required_by)
    try:
        find_proxy()
    except FileNotFoundError as missing:
        unavailable(str(missing), required_by)
    require_chromium(required_by)
    open_to_servers(required_by)


def open_to_servers(required_by: str) -> None:
    """Where a folder above this Python or this checkout is closed to other users (pyenv's
    Python in root's home, /root 0700), every person's server, which runs as its own Unix user,
    could not start: in CI (`required_by`=1) the folder is opened for passing through (o+x, as an
    administrator of a course's machine does; nothing in it becomes listable); elsewhere the test
    skips, naming it."""
    for path in students_reach(ROOT, Path(tempfile.gettempdir())):
        closed = closed_to_others(path.resolve())
        while closed is not None:
            if os.environ.get(required_by) != "1" or os.geteuid() != 0:
                unavailable(f"{closed} is closed to other users: chmod o+x {closed}", required_by)
            closed.chmod(closed.stat().st_mode | stat.S_IXOTH)
            closed = closed_to_others(path.resolve())


def state_folder() -> Path:
    """A hub state folder every person's server can pass through to its home (pytest's own
    temporary folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="viewcopy-hub-", dir=tempfile.gettempdir()))
    folder.chmod(0o711)
    return folder / "state"


@dataclass
class RunningHub:
    """`viewcopy hub` running: its process, what it printed, and the state it started on."""

    process: subprocess.Popen
    said: list[str] = field(default_factory=list)
    state: HubState | None = None
    started_with: tuple[Path, tuple[str, ...]] = (Path("."), ())
    """The folder it was started in and its arguments (less --state), to start it again."""

    @property
    def url(self) -> str:
        return self.state.url

    @property
    def password(self) -> str:
        return self.state.secret("password")

    def home(self, user: str) -> Path:
        return self.state.home(user)

    def output(self) -> str:
        return "\n".join(self.said)

    def printed(self, label: str) -> str:
        """The value the welcome prints after `label:`."""
        line = next(line for line in self.said if line.strip().startswith(f"{label}:"))
        return line.split(":", 1)[1].split()[0]

    def stop(self) -> None:
        """Ctrl-C, as an instructor stops it; killed only if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def restart(self) -> None:
        """Ctrl-C, then `viewcopy hub` again as it was started, on the same state folder."""
        self.stop()
        assert self.process.returncode == 0, self.output()
        folder, args = self.started_with
        again = start_hub(folder, *args, kind=type(self), state=self.state.folder)
        self.process, self.said = again.process, again.said


def start_hub(
    folder: Path, *args: str, kind: type[RunningHub] = RunningHub, state: Path | None = None
) -> RunningHub:
    """`viewcopy hub --state STATE ARGS...`, run in `folder` (as a `kind`), once it says Ctrl-C
    stops it; stopped, and the test failed with what it printed, if it does not. STATE: `state`,
    or a new state_folder()."""
    state = state or state_folder()
    command = [str(Path(sys.executable).parent / "viewcopy"), "hub", *args]
    command += ["--state", str(state)]
    process = started_from_a_terminal(command, cwd=folder)
    running = kind(process, started_with=(folder, args))
    threading.Thread(target=_keep_reading, args=(running,), daemon=True).start()
    deadline = time.monotonic() + START_S
    while not any("Ctrl-C stops" in line for line in running.said):
        if process.poll() is not None or time.monotonic() > deadline:
            running.stop()
            pytest.fail(f"viewcopy hub did not start:\n{running.output()}")
        time.sleep(0.5)
    running.state = HubState.read(state)
    return running


def _keep_reading(running: RunningHub) -> None:
    for line in running.process.stdout:
        running.said.append(line.rstrip("\n"))
