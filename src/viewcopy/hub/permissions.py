"""Who may read what on a one-machine hub: the state folder laid out with its owners and modes,
the course repository's staff-only folders closed to other users, and what students' servers
must reach checked before the hub starts.

| path (in the state folder) | owner:group | mode | who |
|---|---|---|---|
| the folder, `home/` | hub | 0711 | anyone may pass through to their own home |
| `home/<name>` | the person's account | 0700 | them alone (made at first spawn) |
| `secrets/`, `hub.json`, the hub's database, log and proxy pid | hub | 0700 / 0600 | the hub |
| `course/<id>` (master, gradebook, hand-ins) | hub:staff | 2770, files 0660 | the graders |
| `course/<id>/lms` (the LTI tool's key, the launches' link) | hub | 0700 | the hub |
| `lock-data/` (its key, its records) | lock service:its group | 2770, key 0640 | it, graders |
| `exchange/<id>/inbound` | hub:staff | 2773 | students put, graders list and collect |
| `exchange/<id>/outbound` | hub:staff | 2775 | everyone fetches, graders release |
| `exchange/<id>/feedback` | made by a grader | 2771 | a student fetches only their own |
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from viewcopy.files.course_layout import COURSE_DATA, LMS
from viewcopy.hub.accounts import ensure_group, ensure_user, isolating, lock_user, staff_group

STAFF_ONLY = (*COURSE_DATA, ".git")
"""What a course repository holds that no student may read: the master (and its history), and
whatever course data it holds (the students' copies come from the hub's course, through nbgrader's
exchange)."""
HUBS_OWN = LMS
"""The course's folder that stays the hub's: the LTI tool's key, the launches' link."""
HUB_FILES = ("hub.json", "jupyterhub.sqlite", "jupyterhub.log", "proxy.pid")


def close_repository(repo: Path) -> list[Path]:
    """The repository's staff-only entries closed to other users (o-rwx); those it closed."""
    closed = []
    for name in STAFF_ONLY:
        path = repo / name
        if path.exists() and path.stat().st_mode & 0o007:
            path.chmod(path.stat().st_mode & ~0o007)
            closed.append(path)
    return closed


def closed_to_others(path: Path) -> Path | None:
    """The first of `path`'s folders (itself included) another user may not pass, or None."""
    for folder in [*reversed(path.parents), path]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def check_reachable(paths: Iterable[Path]) -> None:
    """ValueError naming the folder and the fix when a student's server could not reach one of
    `paths` (the Python environment, the hub's settings, the homes), or could write into it."""
    for path in paths:
        path = path.resolve()
        closed = closed_to_others(path)
        if closed is not None:
            raise ValueError(
                f"students' servers run as their own Unix users and must reach {path}, but "
                f"{closed} is closed to other users (mode {stat.S_IMODE(closed.stat().st_mode):o})"
                f": chmod o+x {closed}, or keep the Python environment and --state where every "
                "user may pass"
            )
    package = Path(__file__).resolve().parents[1]
    environment = [Path(sys.prefix), *(Path(p) for p in sys.path if p.startswith(sys.prefix))]
    for folder in (p for p in [*environment, package] if p.is_dir()):
        if folder.stat().st_mode & 0o022 or folder.stat().st_uid not in (0, os.geteuid()):
            raise ValueError(
                f"{folder} is writable by others: students would run what they put there; "
                f"chmod go-w {folder}"
            )


def lay_out(state) -> None:
    """Owners and modes of the state folder as the table above says (where the hub is root;
    otherwise only the modes: every server runs as the hub's user)."""
    folder = state.folder
    for path, mode in ((folder, 0o711), (folder / "home", 0o711), (folder / "secrets", 0o700)):
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(mode)
    for secret in (folder / "secrets").iterdir():
        secret.chmod(0o600)
    for name in HUB_FILES:
        if (folder / name).exists():
            (folder / name).chmod(0o600)
    staff = lock = lock_uid = -1
    if isolating():
        staff = ensure_group(staff_group(state.course_id))
        made_for = f"the lock service of {state.course_id}"
        service = ensure_user(lock_user(state.course_id), made_for, system=True)
        lock, lock_uid = service.gid, service.uid
    (folder / "course").chmod(0o750)
    os.chown(folder / "course", -1, staff)
    share(state.course_root, -1, staff, files=0o660)
    share(state.lock_data, lock_uid, lock, files=0o660)
    for secret_file in ("key", "service_id"):
        (state.lock_data / secret_file).chmod(0o640)
    course = state.exchange / state.course_id
    for path, mode in ((course, 0o2775), (course / "inbound", 0o2773)):
        os.chown(path, -1, staff)
        path.chmod(mode)
    share(course / "outbound", -1, staff, files=0o664, folders=0o2775)


def share(top: Path, uid: int, gid: int, files: int, folders: int = 0o2770) -> None:
    """`top` and all below it owned by uid:gid (-1 keeps one), with the group's `files` and
    `folders` modes and nothing for others; an executable keeps its x bits. The course's `lms/`
    folder stays the hub's own (the tool's private key: `lms.keys` refuses any other mode)."""
    for at, names, leaves in os.walk(top):
        if Path(at) == top:
            names[:] = [name for name in names if name != HUBS_OWN]
        for path in [Path(at), *(Path(at) / leaf for leaf in leaves)]:
            if path.is_symlink():
                continue
            os.chown(path, uid, gid)
            mode = folders if path.is_dir() else files | (path.stat().st_mode & 0o110)
            path.chmod(mode)
