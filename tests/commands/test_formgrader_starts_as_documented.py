"""Formgrader starts as the README and docs/instructors.md say: the command they show is read from
their text and run in a real course folder (on a free loopback port, no browser, a token, and
`--allow-root` as root), and the page it opens is formgrader's, listing the course's assignment.

nbgrader 0.9 has no command that starts formgrader (`nbgrader formgrader` printed the list of
subcommands, exit 0, and started nothing): formgrader is a Jupyter server extension, its pages
under /formgrader of a Jupyter server started in the course folder (it reads the
`nbgrader_config.py` there). A course and a JupyterLab server: about 15 s.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import importlib.util
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest
from support.chromium import unavailable
from support.course_notebook import ROOT
from support.servers import free_port, lab_environment

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.course.folder import build_course

pytestmark = pytest.mark.course  # generate_assignment, then a Jupyter server

REQUIRED = "VIEWCOPY_REQUIRE_HUB"  # CI's requirement for the tests that start Jupyter servers
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MUST_SHOW = {"README.md", "instructors.md"}
"""The pages whose instructor's cycle starts formgrader: each must show the command."""
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
SPAN = re.compile(r"(`+)([^`]+?)\1")
STARTS = re.compile(r"(?:^|&&)\s*((?:jupyter|nbgrader)\s[^#&;|]*?\bformgrader?\b[^#&;|]*)")
"""A shell command that starts formgrader, after any `cd DIR &&`, up to its comment or end."""
STARTED_S = 60


def code_lines(text: str) -> list[str]:
    """Each line of the page's code blocks, and each inline code span."""
    blocks = FENCE.findall(text)
    return [line for body in blocks for line in body.splitlines()] + [
        " ".join(span.split()) for _, span in SPAN.findall(FENCE.sub("", text))
    ]


def documented(pages: list[Path] = PAGES) -> dict[str, set[str]]:
    """Each page's commands that start formgrader, by page name."""
    found: dict[str, set[str]] = {}
    for page in pages:
        for line in code_lines(page.read_text()):
            for command in STARTS.findall(line):
                found.setdefault(page.name, set()).add(" ".join(command.split()))
    return found


def the_command() -> list[str]:
    """The one command the docs show to start formgrader, as words."""
    shown = documented()
    broken = sorted(f"{p}: {c}" for p, cs in shown.items() for c in cs if c.startswith("nbgrader"))
    assert broken == [], f"nbgrader 0.9 has no formgrader command, it starts nothing: {broken}"
    missing = MUST_SHOW - set(shown)
    assert not missing, f"no command starting formgrader in {sorted(missing)}"
    commands = set().union(*shown.values())
    assert len(commands) == 1, f"the docs start formgrader in more than one way: {shown}"
    return shlex.split(commands.pop())


def browser() -> urllib.request.OpenerDirector:
    """What a browser keeps between pages (the login cookie the token sets), with no proxy."""
    cookies = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), cookies)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def redirect(url: str) -> tuple[int, str | None]:
    """The status of a GET of `url`, not followed, and the path it redirects to."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, None
    except urllib.error.HTTPError as answer:
        location = answer.headers.get("Location")
        return answer.code, location and urllib.parse.urlsplit(location).path


def answers(url: str) -> bool:
    with contextlib.suppress(OSError):
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=2).close()
        return True
    return False


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (it shuts down cleanly), SIGKILL if it hangs."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def alive(process: psutil.Process) -> bool:
    """Still running (a zombie, exited and waiting to be reaped, is not)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def in_group(group: int) -> list[psutil.Process]:
    """The processes still running in the process group `group`."""
    left = []
    for process in psutil.process_iter():
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(process.pid) == group and alive(process):
                left.append(process)
    return left


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A real course folder, as `viewcopy demo` and the course tests build one: this repository's
    config and master, the release generated."""
    if importlib.util.find_spec("jupyterlab") is None:
        unavailable("jupyterlab is not installed (scripts/setup.sh installs it)", REQUIRED)
    course = tmp_path_factory.mktemp("formgrader") / "course"
    build_course(ROOT, course, {"alice": "Alice"})
    return course


def test_the_documented_command_opens_formgrader_on_the_course(course, tmp_path):
    words = the_command()
    env = lab_environment(tmp_path / "jupyter")
    program = shutil.which(words[0], path=env["PATH"])
    if program is None:
        unavailable(f"no `{words[0]}` on PATH (scripts/setup.sh installs it)", REQUIRED)
    port, token = free_port(), secrets.token_hex(16)
    testing = [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [program, *words[1:], *testing],
            cwd=course,  # the course folder, as the docs run it
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped whole
        )
    group, started = process.pid, []
    try:
        deadline = time.monotonic() + STARTED_S
        while not answers(f"{url}/api/status?token={token}"):
            assert process.poll() is None, f"it exited ({process.returncode}):\n{log.read_text()}"
            assert time.monotonic() < deadline, f"no answer in {STARTED_S} s:\n{log.read_text()}"
            time.sleep(0.2)
        started = [psutil.Process(process.pid), *psutil.Process(process.pid).children(True)]

        # what the browser opens: the server's default URL, where `/` sends it
        assert redirect(f"{url}/?token={token}") == (302, "/formgrader")

        with browser().open(f"{url}/formgrader?token={token}", timeout=60) as page:
            status, landed, html = page.status, page.url, page.read().decode()
        assert status == 200 and landed == f"{url}/formgrader/manage_assignments"
        assert "<title>nbgrader formgrade</title>" in html and "Manage Assignments" in html
        request = urllib.request.Request(
            f"{url}/formgrader/api/assignments", headers={"Authorization": f"token {token}"}
        )
        with browser().open(request, timeout=60) as listed:
            assignments = json.loads(listed.read())
        assert [a["name"] for a in assignments] == [ASSIGNMENT]  # the course's, from its config
    finally:
        stop_group(process)
    assert process.returncode == 0, log.read_text()[-3000:]
    assert [p for p in started if alive(p)] == []
    assert in_group(group) == []


def test_the_check_reads_the_command_and_its_shapes(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\ncd demo_course && jupyter lab --LabApp.default_url=/formgrader  # grade\n"
        "viewcopy five view_or_copy\n```\nOr `jupyter lab --LabApp.default_url=/formgrader`.\n"
        "Formgrader at `http://127.0.0.1:8000/user/instructor/formgrader`.\n"
    )
    assert documented([page]) == {"page.md": {"jupyter lab --LabApp.default_url=/formgrader"}}
    page.write_text("```bash\nnbgrader formgrader            # hand-grade\n```\n")
    assert documented([page]) == {"page.md": {"nbgrader formgrader"}}
