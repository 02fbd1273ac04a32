"""`viewcopy hub` started by a test as an instructor starts it: its process, what it printed and
the state it runs on; stopped as Ctrl-C stops it (JupyterHub runs in a session of its own, so
killing the launcher would leave it, its proxy and the lock service running)."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.chromium import require_chromium, unavailable
from support.command_line import started_from_a_terminal

from viewcopy.hub.state import HubState, find_proxy

START_S = 600  # the first start builds the course and releases it
STOP_S = 120


def require_hub(required_by: str) -> None:
    """JupyterHub, its proxy, Playwright and Chromium, or skip; fail instead where the
    environment variable `required_by` is 1 (CI)."""
    if importlib.util.find_spec("jupyterhub") is None:
        unavailable("jupyterhub is not installed (scripts/setup.sh installs it)", required_by)
    try:
        find_proxy()
    except FileNotFoundError as missing:
        unavailable(str(missing), required_by)
    require_chromium(required_by)


@dataclass
class RunningHub:
    """`viewcopy hub` running: its process, what it printed, and the state it started on."""

    process: subprocess.Popen
    said: list[str] = field(default_factory=list)
    state: HubState | None = None

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


def start_hub(folder: Path, *args: str, kind: type[RunningHub] = RunningHub) -> RunningHub:
    """`viewcopy hub --state folder/state ARGS...` (as a `kind`) once it says Ctrl-C stops it;
    stopped, and the test failed with what it printed, if it does not."""
    command = [str(Path(sys.executable).parent / "viewcopy"), "hub", *args]
    command += ["--state", str(folder / "state")]
    process = started_from_a_terminal(command, cwd=folder)
    running = kind(process)
    threading.Thread(target=_keep_reading, args=(running,), daemon=True).start()
    deadline = time.monotonic() + START_S
    while not any("Ctrl-C stops" in line for line in running.said):
        if process.poll() is not None or time.monotonic() > deadline:
            running.stop()
            pytest.fail(f"viewcopy hub did not start:\n{running.output()}")
        time.sleep(0.5)
    running.state = HubState.read(folder / "state")
    return running


def _keep_reading(running: RunningHub) -> None:
    for line in running.process.stdout:
        running.said.append(line.rstrip("\n"))
