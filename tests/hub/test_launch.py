"""`viewcopy hub` leaves nothing running even when the hub itself dies: what it was seen to start
(servers run in sessions of their own, so they outlive it) is killed when it stops. A real
process tree stands in for the hub: a parent that starts a child in its own session."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from viewcopy.hub.launch import RunningHub
from viewcopy.hub.state import HubState

PARENT = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
time.sleep(600)
"""


def test_what_a_crashed_hub_started_is_killed_when_it_stops(tmp_path):
    process = subprocess.Popen([sys.executable, "-c", PARENT])
    state = HubState(tmp_path, 1, 2, 3, 4, "configurable-http-proxy")
    hub = RunningHub(state, process)
    deadline = time.monotonic() + 30
    while not psutil.Process(process.pid).children():
        assert time.monotonic() < deadline, "the stand-in hub started nothing"
        time.sleep(0.1)
    hub.look()
    (server,) = hub.seen.values()
    process.kill()  # the hub dies; its server does not
    process.wait()
    assert server.is_running()
    assert hub.stop() == [server.pid]
    assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
