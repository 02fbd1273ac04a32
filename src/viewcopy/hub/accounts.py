"""The Unix accounts a one-machine hub gives its people and its lock service, as The Littlest
JupyterHub does: a user each, made at first spawn, never root and never the hub's own.

A hub name maps one-to-one to a Unix name: `vc-<name>` where the name is already a safe Unix
name, else `vc_<a safe prefix>_<16 hex of its SHA-256>`; the two forms differ at their third
character, so no name of one form is ever the other's. Each account's comment records the hub
name it was made for, so an account that exists for someone else (made by hand, or by another
tool) is refused rather than shared. The course's staff and the lock service's readers are Unix
groups of their own (`vcs-<course>`, `vcl-<course>`), outside both forms.
"""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

SAFE = re.compile(r"[a-z0-9][a-z0-9_-]{0,28}")
"""A hub name kept as it is: what useradd accepts, short enough for `vc-` and 32 characters."""
SHELL = "/bin/bash"  # a terminal in JupyterLab
NO_HOME = "/nonexistent"  # the lock service's: it writes only its data folder


class AccountError(RuntimeError):
    """An account the hub needs could not be made or used; the sentence says why and the fix."""


class AccountTaken(AccountError):
    """A Unix account of the name exists and was not made by the hub for this one."""


def unix_name(hub_name: str) -> str:
    """The Unix user a hub name runs as: one-to-one, at most 32 characters."""
    if SAFE.fullmatch(hub_name):
        return f"vc-{hub_name}"
    prefix = re.sub(r"[^a-z0-9]", "", hub_name.lower())[:10]
    return f"vc_{prefix}_{hashlib.sha256(hub_name.encode()).hexdigest()[:16]}"


def course_name(kind: str, course_id: str) -> str:
    """`vcs-<course>` (the staff) or `vcl-<course>` (the lock service), hashed where unsafe."""
    safe = SAFE.fullmatch(course_id) and len(course_id) <= 28
    tail = course_id if safe else hashlib.sha256(course_id.encode()).hexdigest()[:16]
    return f"{kind}-{tail}"


def staff_group(course_id: str) -> str:
    """The Unix group that owns the course: its graders."""
    return course_name("vcs", course_id)


def lock_user(course_id: str) -> str:
    """The lock service's own Unix user; its group holds the graders, who read its records."""
    return course_name("vcl", course_id)


@dataclass(frozen=True)
class Account:
    """A Unix account the hub made: its name, ids and the hub name it was made for."""

    name: str
    uid: int
    gid: int
    made_for: str

    @classmethod
    def of(cls, entry: pwd.struct_passwd, made_for: str) -> Account:
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid, made_for)


def comment(made_for: str) -> str:
    """The account's comment: the hub name, quoted so no `:` or `,` reaches /etc/passwd."""
    return f"viewcopy hub user {quote(made_for, safe='@.-_ ')}"


def ensure_user(name: str, made_for: str, home: str = NO_HOME, system: bool = False) -> Account:
    """The account `name`, made now if missing (its own group, no home made, a shell for the
    terminal); AccountTaken if it exists for anyone else."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        kind = ["--system"] if system else []
        made = ["--no-create-home", "--home-dir", home, "--shell", SHELL, "--user-group"]
        run(["useradd", *kind, *made, "--comment", comment(made_for), name], made_by_another=9)
        entry = pwd.getpwnam(name)
    if entry.pw_gecos != comment(made_for):
        raise AccountTaken(
            f"the Unix user {name} exists but is not the hub's account for {made_for!r} (its "
            f"comment is {entry.pw_gecos!r}): remove or rename it (userdel {name}), or run the "
            "hub where that name is free"
        )
    return Account.of(entry, made_for)


def ensure_group(name: str) -> int:
    """The group `name`'s gid, made now if missing."""
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        run(["groupadd", "--system", name], made_by_another=9)
        return grp.getgrnam(name).gr_gid


def set_membership(user: str, groups: dict[str, bool]) -> None:
    """`user` in each group whose value is true and out of each whose value is false."""
    for group, member in groups.items():
        ensure_group(group)
        now = user in grp.getgrnam(group).gr_mem
        if member and not now:
            run(["gpasswd", "--add", user, group])
        elif now and not member:
            run(["gpasswd", "--delete", user, group])


def run(command: list[str], made_by_another: int | None = None) -> None:
    """An account command, quietly; its own message if it fails. `made_by_another`: the exit
    status that says the name was taken meanwhile (another hub starting beside this one), which
    the caller then reads and checks as it would have."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, made_by_another):
        raise AccountError(f"{' '.join(command)} failed: {done.stderr.strip()}")


def own_tree(path: Path, uid: int, gid: int) -> None:
    """`path` and everything below it owned by uid:gid (links themselves, never followed)."""
    for folder, folders, files in os.walk(path):
        for name in [*folders, *files]:
            os.chown(Path(folder) / name, uid, gid, follow_symlinks=False)
    os.chown(path, uid, gid, follow_symlinks=False)


def isolating() -> bool:
    """Whether this hub can give each person an account of their own: only root can."""
    return os.geteuid() == 0
