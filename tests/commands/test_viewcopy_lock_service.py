"""`viewcopy lock-service`: the service run as an instructor runs it, until Ctrl-C, its receipts
verified with its own key; `tokens`: every student of the course's gradebook gets one CSV row with
a token the service's key verifies, issued in one process; the file is a secret (mode 0600), and
a course with no gradebook or no students says what to do. The tokens need only a SQLite
gradebook built with nbgrader's API (no kernels, no service), so they run in the fast subset."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from support.command_line import VIEWCOPY, installed_viewcopy, started_from_a_terminal
from support.servers import free_port

from viewcopy.cli import USAGE_ERROR, main
from viewcopy.course.assignment import COURSE_ID, nbgrader_env
from viewcopy.locking.client import LockServiceClient
from viewcopy.locking.receipts import token_student, verify
from viewcopy.locking.store import KEY_FILE, load_key, service_id

AWKWARD = ("al,ice", 'bo"b', "new\nline", "zoe")
"""Ids CSV must quote: a comma, a double quote, a newline; and one it need not."""


@pytest.fixture(scope="module")
def empty_gradebook(tmp_path_factory) -> Path:
    """A gradebook.db with no students, made once: a new one asks `alembic` its version (2 s)."""
    from nbgrader.api import Gradebook

    path = tmp_path_factory.mktemp("template") / "gradebook.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", nbgrader_env()["PATH"])
        Gradebook(f"sqlite:///{path}", COURSE_ID).close()
    return path


@pytest.fixture
def enrol(empty_gradebook):
    """enrol(course, ids): a course folder whose gradebook.db lists those students."""
    from nbgrader.api import Gradebook

    def enrolled(course: Path, students) -> Path:
        course.mkdir(parents=True, exist_ok=True)
        shutil.copy(empty_gradebook, course / "gradebook.db")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
            for student in students:
                gradebook.add_student(student)
        return course

    return enrolled


def cli(*args: str) -> subprocess.CompletedProcess:
    """The real command, in a process of its own."""
    command = [sys.executable, "-m", "viewcopy.cli", "lock-service", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_every_student_gets_one_row_whose_token_the_key_verifies(tmp_path, enrol, capsys):
    course = enrol(tmp_path / "course", reversed(AWKWARD))
    data = tmp_path / "data"
    assert main(["lock-service", "tokens", "--data", str(data), "--course", str(course)]) == 0
    header, *rows = rows_of(capsys.readouterr().out)
    assert header == ["student", "token"]
    assert [student for student, _ in rows] == sorted(AWKWARD)  # each once, in id order
    key = load_key(data)
    assert all(token_student(key, token) == student for student, token in rows)


def test_the_out_file_is_0600_and_the_command_says_how_many_went_where(tmp_path, enrol, capsys):
    course = enrol(tmp_path / "course", AWKWARD)
    out = tmp_path / "tokens.csv"
    out.write_text("an older, readable file\n")
    out.chmod(0o644)
    argv = ["lock-service", "tokens", "--data", str(tmp_path / "data"), "--course", str(course)]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 and "4 tokens" in printed[0] and str(out) in printed[0]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with out.open(newline="") as file:
        assert [row[0] for row in csv.reader(file)] == ["student", *sorted(AWKWARD)]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tokens")] == []


def test_a_class_of_300_is_issued_by_one_process(tmp_path, enrol):
    ids = [f"s{n:03}" for n in range(300)]
    course = enrol(tmp_path / "course", ids)
    done = cli("tokens", "--data", str(tmp_path / "data"), "--course", str(course))
    assert done.returncode == 0, done.stderr
    header, *rows = rows_of(done.stdout)
    assert len(rows) == 300 and [r[0] for r in rows] == ids


def test_a_tokens_row_is_the_token_command_s_token(tmp_path, enrol, capsys):
    course = enrol(tmp_path / "course", AWKWARD)
    data, out = str(tmp_path / "data"), str(tmp_path / "tokens.csv")
    assert (
        main(["lock-service", "tokens", "--data", data, "--course", str(course), "--out", out]) == 0
    )
    capsys.readouterr()
    assert main(["lock-service", "token", "al,ice", "--data", data]) == 0
    single = capsys.readouterr().out.strip()
    with open(out, newline="") as file:
        assert dict(csv.reader(file))["al,ice"] == single


def test_an_empty_gradebook_is_one_line_naming_the_course_and_the_fix(tmp_path, enrol):
    course = enrol(tmp_path / "course", ())
    done = cli("tokens", "--data", str(tmp_path / "data"), "--course", str(course))
    assert done.returncode == USAGE_ERROR and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert str(course) in line and "nbgrader db student add" in line


def test_a_folder_without_a_gradebook_is_one_line_and_creates_none(tmp_path, capsys):
    argv = ["lock-service", "tokens", "--data", str(tmp_path / "data"), "--course", str(tmp_path)]
    assert main(argv) == USAGE_ERROR
    (line,) = capsys.readouterr().err.splitlines()
    assert "has no gradebook" in line and str(tmp_path / "gradebook.db") in line
    assert not (tmp_path / "gradebook.db").exists()


def test_the_course_s_configured_db_url_is_the_gradebook_read(tmp_path, enrol, capsys):
    elsewhere = enrol(tmp_path / "elsewhere", ("ada",))
    course = tmp_path / "course"
    course.mkdir()
    url = f"sqlite:///{elsewhere / 'gradebook.db'}"
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.db_url = {url!r}\n"
    )
    argv = ["lock-service", "tokens", "--data", str(tmp_path / "data"), "--course", str(course)]
    assert main(argv) == 0
    assert [row[0] for row in rows_of(capsys.readouterr().out)] == ["student", "ada"]


# --- the service itself, as `viewcopy lock-service --data DIR` runs it ------------------------


@pytest.mark.service
def test_the_service_answers_until_ctrl_c_and_its_receipts_verify_with_its_key(tmp_path):
    data, port = tmp_path / "data", free_port()
    command = [str(VIEWCOPY), "lock-service", "--data", str(data), "--port", str(port)]
    process = started_from_a_terminal(command)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stdout.read()
            assert time.monotonic() < deadline, "the service never answered its health check"
            try:
                with urllib.request.urlopen(f"{url}/v1/health", timeout=1) as response:
                    health = json.loads(response.read())
                break
            except OSError:
                time.sleep(0.2)
        assert service_id(data) in json.dumps(health)
        assert stat.S_IMODE((data / KEY_FILE).stat().st_mode) == 0o600

        token = installed_viewcopy("lock-service", "token", "ada", "--data", str(data))
        assert token.returncode == 0, token.stderr
        fingerprint = hashlib.sha256(b"ada's twenty").hexdigest()
        receipt = LockServiceClient(url, token.stdout.strip()).lock("a1", fingerprint)
        payload = verify(load_key(data), receipt)
        assert (payload["student"], payload["assignment"], payload["event"]) == (
            "ada",
            "a1",
            "lock",
        )
        assert payload["service"] == service_id(data)
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert output.rstrip().endswith("lock service stopped")


def test_the_service_without_a_data_folder_is_a_usage_error_naming_the_flag():
    done = installed_viewcopy("lock-service")
    assert (done.returncode, done.stdout) == (2, "")
    assert "lock-service needs --data DIR" in done.stderr and "Traceback" not in done.stderr
