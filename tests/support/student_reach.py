"""What a curious student tries from a kernel of their own hub server: every place of the course,
the hub and another student that must be closed to them, and what they can see of other
processes. The paths are the hub's (computed as root, where each is checked to exist first, so a
refusal is never a missing file); the kernel reports what each attempt met."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK
from viewcopy.hub.state import HubState

PROBE = r"""
import json, os, pwd, sqlite3
targets = json.loads({targets!r})

def attempt(action):
    try:
        action()
        return "done"
    except PermissionError:
        return "PermissionError"
    except Exception as failed:
        return f"{{type(failed).__name__}}: {{failed}}"

def create_in(folder):
    os.close(os.open(os.path.join(folder, "bob-was-here"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))

def update_gradebook(path):
    with sqlite3.connect(f"file:{{path}}?mode=rw", uri=True) as db:
        db.execute("UPDATE grade SET manual_score = 0")
        db.rollback()

seen = []  # every other process's environment and command line this user could read
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        try:
            with open(f"/proc/{{pid}}/{{part}}", "rb") as file:
                seen.append(file.read().decode(errors="replace"))
        except OSError:
            pass
print(json.dumps({{
    "uid": os.getuid(),
    "user": pwd.getpwuid(os.getuid()).pw_name,
    "read": {{k: attempt(lambda p=p: open(p, "rb").read(1)) for k, p in targets["read"].items()}},
    "list": {{k: attempt(lambda p=p: os.listdir(p)) for k, p in targets["list"].items()}},
    "append": {{k: attempt(lambda p=p: open(p, "ab").close()) for k, p in targets["append"].items()
    }},
    "create": {{k: attempt(lambda p=p: create_in(p)) for k, p in targets["create"].items()}},
    "gradebook": attempt(lambda: update_gradebook(targets["gradebook"])),
    "guessed": attempt(lambda: open(targets["guessed"], "rb").read(1)),
    "own home": attempt(lambda: create_in(os.path.expanduser("~"))),
    "outbound": attempt(lambda: os.listdir(targets["outbound"])),
    "environment": dict(os.environ),
    "seen": seen,
}}))
"""


def targets(state: HubState, repo: Path, victim: str, student: str) -> dict:
    """Where `student` must not reach: the course, the hub's secrets and state, the lock
    service's key and records, `victim`'s home, submission and feedback, this Python."""
    course, exchange, lock = state.course_root, state.exchange / state.course_id, state.lock_data
    home = state.home(victim)
    submission = next((exchange / "inbound").glob(f"{victim}+{ASSIGNMENT}+*"))
    feedback = next((exchange / "feedback").glob("*.html"))
    master = Path("source") / ASSIGNMENT / NOTEBOOK
    work = home / COURSE_ID / ASSIGNMENT / NOTEBOOK
    site = Path(psutil.__file__).parents[1]
    found = {
        "read": {
            "the course's master": course / master,
            "the repository's master": repo / master,
            "the repository's history": repo / ".git" / "HEAD",
            "the gradebook": course / "gradebook.db",
            "the course config": course / "nbgrader_config.py",
            f"{victim}'s notebook": work,
            "the hub's cookie secret": state.folder / "secrets" / "cookie_secret",
            "the course-admin token": state.folder / "secrets" / "admin_token",
            "the shared password": state.folder / "secrets" / "password",
            "the hub's database": state.folder / "jupyterhub.sqlite",
            "the hub's state": state.folder / "hub.json",
            "the lock service's key": lock / "key",
            "the lock store": lock / "locks.sqlite",
        },
        "list": {
            "the exchange's inbound": exchange / "inbound",
            "the exchange's feedback": exchange / "feedback",
            f"{victim}'s home": home,
            "every home": state.folder / "home",
            "the course": course,
            "the lock data": lock,
            "the hub's secrets": state.folder / "secrets",
        },
        "append": {
            "the gradebook": course / "gradebook.db",
            f"{victim}'s notebook": work,
            f"{victim}'s submission": submission / NOTEBOOK,
            f"{victim}'s feedback": feedback,
            "the lock store": lock / "locks.sqlite",
            "the release": exchange / "outbound" / ASSIGNMENT / NOTEBOOK,
        },
        "create": {
            f"{victim}'s home": home,
            "the course's source": course / "source",
            "the lock data": lock,
            "this Python's packages": site,
            "this Python": Path(sys.prefix) / "bin",
            "the viewcopy package": repo / "src" / "viewcopy",
        },
    }
    for kind in found.values():
        for what, path in kind.items():
            assert path.exists(), f"{what}: {path} is missing, so refusing it would prove nothing"
    return {
        **{kind: {k: str(p) for k, p in paths.items()} for kind, paths in found.items()},
        "gradebook": str(course / "gradebook.db"),
        "guessed": str(guessed(submission) / NOTEBOOK),
        "outbound": str(exchange / "outbound" / ASSIGNMENT),
    }


def guessed(submission: Path) -> Path:
    """The submission's name as a student could guess it (student, assignment, a timestamp):
    without nbgrader's random part (72 bits) that only a listing of inbound shows."""
    student, assignment, timestamp, random_part = submission.name.split("+")
    assert len(random_part) == 12, submission.name  # base64 of 9 random bytes
    return submission.with_name(f"{student}+{assignment}+{timestamp}")


def probe(state: HubState, repo: Path, victim: str, student: str) -> str:
    """The code a student's kernel runs to try every reach; it prints one JSON object."""
    return PROBE.format(targets=json.dumps(targets(state, repo, victim, student)))


def secrets_of_others(state: HubState, student_uid: int) -> dict[str, str]:
    """Every secret the hub and other people's processes hold, read as root: the hub's files,
    the lock service's key, and each token or secret in another process's environment."""
    found = {
        name: (state.folder / "secrets" / name).read_text().strip()
        for name in ("cookie_secret", "admin_token", "password")
    }
    found["lock key"] = (state.lock_data / "key").read_text().strip()
    for process in psutil.process_iter(["uids", "name"]):
        if process.info["uids"] is None or process.info["uids"].real == student_uid:
            continue
        try:
            environment = process.environ()
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        for key, value in environment.items():
            if ("TOKEN" in key or "SECRET" in key) and len(value) >= 16:
                found[f"{key} of pid {process.pid}"] = value
    return found
