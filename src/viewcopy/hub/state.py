"""A one-machine JupyterHub's state folder: the course, nbgrader's exchange, the lock service's
data, the demo users and their secrets; what `deploy/jupyterhub/jupyterhub_config.py` reads.

Made once and kept (the hub's database, students' work, locks); ports are chosen at each start.
With an LMS registration (`viewcopy hub --lti`) the hub's login is LTI 1.3: the course keeps the
registration and its own key in its `lms/` folder, and the course lives in the state folder
rather than in a user's home (a hub name is then whatever the LMS says).
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, enrol, run_nbgrader
from viewcopy.course.folder import Course, build_course
from viewcopy.files.atomic import publish_folder, write_atomically, write_once
from viewcopy.hub.permissions import check_reachable, close_repository, lay_out
from viewcopy.lms.keys import ToolKey
from viewcopy.lms.registration import REGISTRATION_FILE, Registration
from viewcopy.locking.store import init_data

STUDENTS = ("alice", "bob")
GRADERS = ("instructor",)
OTHERS = ("guest",)  # a hub user who is not in the course: the lock service refuses them
PROXY = "configurable-http-proxy"
CONFIG_FOLDER = Path("deploy") / "jupyterhub"


@dataclass(frozen=True)
class HubState:
    """A start's ports, proxy and users, kept in `folder/hub.json` for the hub's config; the
    folder's layout (homes, exchange, lock data, secrets) follows from the folder."""

    folder: Path
    port: int
    hub_port: int
    proxy_api_port: int
    lock_port: int
    proxy: str
    students: tuple[str, ...] = STUDENTS
    graders: tuple[str, ...] = GRADERS
    others: tuple[str, ...] = OTHERS
    course_id: str = COURSE_ID
    assignment: str = ASSIGNMENT
    lti: bool = False  # the login: LTI 1.3 from the course's LMS, or the demo's shared password

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def course_root(self) -> Path:
        """The course, the staff's: each grader finds it at `~/<course id>`."""
        return self.folder / "course" / self.course_id

    @property
    def lms(self) -> Path:
        """The course's LMS files: registration.json, tool_key.pem, link.json."""
        return Course(self.course_root).lms

    def registration(self) -> Registration:
        return Registration.read(self.lms / REGISTRATION_FILE)

    @property
    def exchange(self) -> Path:
        return self.folder / "exchange"

    @property
    def lock_data(self) -> Path:
        return self.folder / "lock-data"

    @property
    def log(self) -> Path:
        """What the hub says, as it runs."""
        return self.folder / "jupyterhub.log"

    def home(self, user: str) -> Path:
        return self.folder / "home" / user

    def secret(self, name: str) -> str:
        return (self.folder / "secrets" / name).read_text().strip()

    @classmethod
    def read(cls, folder: Path) -> HubState:
        """The state the last start wrote to `folder/hub.json`."""
        described = json.loads((folder / "hub.json").read_text())
        return cls(
            folder, **{k: tuple(v) if isinstance(v, list) else v for k, v in described.items()}
        )

    def write(self) -> None:
        """hub.json, as `read` (the hub's config) reads it."""
        described = {k: v for k, v in asdict(self).items() if k != "folder"}
        text = json.dumps(described, indent=1) + "\n"
        write_atomically(self.folder / "hub.json", text, mode=0o600)


def find_proxy() -> str:
    """configurable-http-proxy beside this Python (scripts/setup.sh puts it there) or on PATH."""
    beside = Path(sys.executable).parent / PROXY
    found = str(beside) if beside.exists() else shutil.which(PROXY)
    if found is None:
        raise FileNotFoundError(
            f"no {PROXY}: install it with `npm install -g --prefix .venv {PROXY}` "
            "(scripts/setup.sh does, where npm is installed)"
        )
    return found


def prepare(
    repo: Path,
    folder: Path,
    port: int,
    ports: Sequence[int],
    students: Sequence[str] = STUDENTS,
    registration: Path | None = None,
) -> HubState:
    """The state folder made (or kept) for this start: secrets, exchange, lock data, and the
    course built from `repo` and its assignment released, the first time.

    With a `registration` file (or one the state already keeps) the login is LTI 1.3: the
    registration is checked first (ValueError naming the file and field), kept in the course's
    lms/ folder, and the course's key made there once; the students are whoever launches.
    """
    folder = folder.resolve()
    at = (port, *ports)  # the hub's, its API's, the proxy API's and the lock service's
    kept = HubState(folder, *at, PROXY, lti=True).lms / REGISTRATION_FILE
    registered = Registration.read(registration or kept) if registration or kept.exists() else None
    if registered is not None:  # the students and graders are whoever launches
        state = HubState(folder, *at, find_proxy(), (), (), (), lti=True)
    else:
        state = HubState(folder, *at, find_proxy(), tuple(students))
    folder.mkdir(parents=True, exist_ok=True)
    check_reachable(students_reach(repo, folder))
    keep_secrets(folder / "secrets")
    state.exchange.mkdir(parents=True, exist_ok=True)
    state.exchange.chmod(0o1777)  # nbgrader's exchange root: each course's folder sets its modes
    init_data(state.lock_data)
    moved_from_an_earlier_release(state)
    if Course(state.course_root).gradebook_file.exists():
        enrol(state.course_root, {s: s for s in students})  # a student added since
    else:
        build_course(repo.resolve(), state.course_root, {s: s for s in students})
        run_nbgrader(
            state.course_root,
            "release_assignment",
            state.assignment,
            f"--Exchange.root={state.exchange}",
            "--Exchange.path_includes_course=True",
            "--CourseDirectory.groupshared=True",  # graders re-release and collect as a group
            "--force",
        )
    if registered is not None:
        keep_registration(state.lms, registered)
    state.write()
    lay_out(state)
    close_repository(repo.resolve())
    return state


def students_reach(repo: Path, folder: Path) -> list[Path]:
    """What every person's server runs from: this Python (its environment and the interpreter
    it was made from), the hub's settings for servers, and the state folder with the homes."""
    return [Path(sys.base_prefix), Path(sys.prefix), repo / CONFIG_FOLDER, folder]


def moved_from_an_earlier_release(state: HubState) -> None:
    """A state folder made before the course was the staff's kept it in the first grader's
    home: it moves to `course/`, where every grader's `~/<course id>` link points."""
    earlier = state.home(GRADERS[0]) / state.course_id
    if not state.course_root.exists() and earlier.is_dir() and not earlier.is_symlink():
        state.course_root.parent.mkdir(parents=True, exist_ok=True)
        publish_folder(earlier, state.course_root)


def keep_registration(folder: Path, registration: Registration) -> ToolKey:
    """registration.json in the course's lms/ folder, and the course's key made there once.
    The deployments already kept for the same platform and client stay (`viewcopy lms
    deployment add` added them)."""
    key = ToolKey.ensure(folder)
    path = folder / REGISTRATION_FILE
    if path.is_file():
        kept = Registration.read(path)
        if (kept.issuer, kept.client_id) == (registration.issuer, registration.client_id):
            registration = registration.with_deployments(*kept.deployment_ids)
    registration.write(path)
    return key


def keep_secrets(folder: Path) -> None:
    """The cookie secret, the demo password and the course-admin token, made once, owner-only."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    made = {
        "cookie_secret": lambda: secrets.token_hex(32),
        "password": lambda: secrets.token_urlsafe(12),
        "admin_token": lambda: secrets.token_hex(32),
    }
    for name, make in made.items():  # a secret kept is never rewritten, even by a start racing
        write_once(folder / name, make() + "\n", mode=0o600)
