"""Run the course's JupyterHub in the foreground: start it, say where and who, and on Ctrl-C stop
it and everything it started (its proxy, the lock service, every user's server)."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from viewcopy.hub.accounts import isolating, lock_user, staff_group
from viewcopy.hub.state import CONFIG_FOLDER, HubState

CONFIG = CONFIG_FOLDER / "jupyterhub_config.py"
START_S = 120
STOP_S = 60


class HubDidNotStart(Exception):
    """JupyterHub exited, or did not answer in time; the message ends with its log."""


@dataclass
class RunningHub:
    """A JupyterHub process on a state folder, and every process it was seen to start."""

    state: HubState
    process: subprocess.Popen
    seen: dict[int, psutil.Process] = field(default_factory=dict)

    def ready(self) -> bool:
        health = f"{self.state.url}/hub/health"
        with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=2) as answer:
            return answer.status == 200
        return False

    def look(self) -> None:
        """Remember the hub's processes now (a server it started outlives a hub that crashes)."""
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self.seen.setdefault(child.pid, child)

    def wait(self, every_s: float = 2) -> int:
        """Until the hub exits, looking at what it starts; its exit status."""
        while self.process.poll() is None:
            self.look()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=every_s)
        return self.process.returncode

    def stop(self) -> list[int]:
        """SIGTERM the hub (it stops its servers, services and proxy) and wait; then kill what is
        left of everything it was seen to start. The pids that had to be killed."""
        self.look()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        left = [p for p in self.seen.values() if alive(p)]
        for process in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(left, timeout=10)
        return [p.pid for p in left]


def alive(process: psutil.Process) -> bool:
    """Running and not a zombie (`is_running` also checks the pid was not reused)."""
    with contextlib.suppress(psutil.NoSuchProcess):
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    return False


def start(repo: Path, state: HubState) -> RunningHub:
    """JupyterHub on `state`, once its health check answers; HubDidNotStart with its log if not."""
    log = state.log
    env = {**os.environ, "VIEWCOPY_HUB_STATE": str(state.folder)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    program = Path(sys.executable).parent / "jupyterhub"
    if not program.exists():
        raise FileNotFoundError(f"no {program}: pip install -e '.[hub]' (scripts/setup.sh does)")
    command = [str(program), "-f", str(repo.resolve() / CONFIG)]
    log.touch(mode=0o600)
    log.chmod(0o600)  # what the hub says names its users and paths: the hub's alone
    with log.open("a") as sink:
        process = subprocess.Popen(
            command,
            cwd=state.folder,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the launcher, which stops the hub in order
            umask=0o077,  # its database, log and pid file are the hub's alone
        )
    hub = RunningHub(state, process)
    deadline = time.monotonic() + START_S
    while not hub.ready():
        hub.look()
        if process.poll() is not None or time.monotonic() > deadline:
            hub.stop()
            tail = "\n".join(log.read_text().splitlines()[-25:])
            raise HubDidNotStart(f"JupyterHub did not start (see {log}):\n{tail}")
        time.sleep(0.5)
    return hub


def welcome(state: HubState) -> str:
    """Where the hub is and who can log in."""
    if state.lti:
        return lti_welcome(state)
    return "\n".join(
        [
            f"JupyterHub for {state.course_id}: {state.url}",
            f"  students:   {', '.join(state.students)}",
            f"  instructor: {', '.join(state.graders)} (formgrader: {state.url}/user/"
            f"{state.graders[0]}/formgrader)",
            f"  not in the course: {', '.join(state.others)}",
            f"  password (everyone): {state.secret('password')}",
            servers(state),
            f"state: {state.folder} (log: {state.log.name}); Ctrl-C stops the hub and every server",
        ]
    )


def servers(state: HubState) -> str:
    """Who each person's server runs as, and whether real students may meet this hub."""
    if isolating():
        return (
            f"  servers: each person as their own Unix user (vc-<name>); the course is the "
            f"group {staff_group(state.course_id)}'s, the lock service runs as "
            f"{lock_user(state.course_id)}"
        )
    user = pwd.getpwuid(os.geteuid()).pw_name
    return (
        f"  servers: everyone's as {user}, who can read the whole course: a demo for one person, "
        "never for real students (run viewcopy hub as root: a Unix user each)"
    )


def lti_welcome(state: HubState) -> str:
    """Where the hub is, and what to give the LMS where the tool is registered."""
    from viewcopy.lms.keys import ToolKey
    from viewcopy.lms.tool import hub_urls
    from viewcopy.lms.vocabulary import TOOL_SCOPES

    registration = state.registration()
    return "\n".join(
        [
            f"JupyterHub for {state.course_id}: {state.url}",
            f"  login: LTI 1.3 launches from {registration.issuer} (client "
            f"{registration.client_id}, deployment(s) {', '.join(registration.deployment_ids)}); "
            "Learners are students, Instructors and TeachingAssistants graders",
            "  give the LMS (docs/lms.md):",
            *(f"    {what}: {url}" for what, url in hub_urls(state.url).items()),
            f"    key id: {ToolKey.ensure(state.lms).kid}",
            f"    scopes: {' '.join(TOOL_SCOPES)}",
            f"  course: {state.course_root} (graders' servers have it as $VIEWCOPY_COURSE_ROOT)",
            servers(state),
            f"state: {state.folder} (log: {state.log.name}); Ctrl-C stops the hub and every server",
        ]
    )


def interrupted(signum, frame) -> None:
    """SIGTERM stops the hub as Ctrl-C does."""
    raise KeyboardInterrupt


def port_in_use(port: int) -> bool:
    """Whether something already listens on the loopback `port`."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports free now."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def serve(repo: Path, state: HubState, say: Callable[[str], None] = print) -> str:
    """Run the hub until Ctrl-C (or SIGTERM), then stop everything it started."""
    hub = start(repo, state)
    say(welcome(state))
    previous = signal.signal(signal.SIGTERM, interrupted)
    ended = ""
    try:
        ended = f"JupyterHub exited ({hub.wait()}; see {state.log}): "
    except KeyboardInterrupt:
        say("stopping the hub and every server it started ...")
    finally:
        killed = hub.stop()
        signal.signal(signal.SIGTERM, previous)
    return f"{ended}hub stopped, nothing left running" + (f" (killed {killed})" if killed else "")
