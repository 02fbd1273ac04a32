"""Each person's JupyterLab as their own Unix user (`hub.accounts`), in their own home in the
hub's state folder: JupyterHub's LocalProcessSpawner with the account made at first spawn.

A grader's account is in the course's staff group and the lock service's group (at every spawn,
as the hub's groups say now: a grader who became a student leaves them), starts with umask 007 so
what they write in the course stays the staff's, and finds the course at `~/<course id>`. A
student's starts with umask 077. A hub that is not root cannot switch users: every server then
runs as the hub's user, which `viewcopy hub` says is a demo for one person.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Bool, Unicode, default

from viewcopy.hub.accounts import (
    SHELL,
    ensure_user,
    isolating,
    lock_user,
    own_tree,
    set_membership,
    staff_group,
    unix_name,
)

STUDENT_UMASK, GRADER_UMASK = 0o077, 0o007


class CourseSpawner(LocalProcessSpawner):
    """A server per person, as their own Unix user where the hub is root."""

    home_dir_template = Unicode(config=True, help="Each person's home; {username}: the hub name")
    course_root = Unicode(config=True, help="The course folder, owned by the staff group")
    course_id = Unicode(config=True, help="The course's id: its groups' and link's name")
    grader_group = Unicode(config=True, help="The hub group whose members are graders")
    isolate = Bool(config=True, help="A Unix user each (needs root); else all as the hub's user")

    @default("isolate")
    def _isolate_default(self) -> bool:
        return isolating()

    @property
    def home_dir(self) -> Path:
        return Path(self.home_dir_template.format(username=self.user.name))

    @property
    def grader(self) -> bool:
        return self.grader_group in {group.name for group in self.user.groups}

    @property
    def unix_user(self) -> str:
        return unix_name(self.user.name) if self.isolate else pwd.getpwuid(os.geteuid()).pw_name

    @property
    def course_link(self) -> Path:
        """Where a grader finds the course: in their home, so formgrader serves it."""
        return self.home_dir / self.course_id

    async def start(self):
        home = self.home_dir
        home.mkdir(parents=True, exist_ok=True)
        if self.isolate:
            account = ensure_user(self.unix_user, self.user.name, home=str(home))
            groups = (staff_group(self.course_id), lock_user(self.course_id))
            set_membership(account.name, dict.fromkeys(groups, self.grader))
            if home.stat().st_uid != account.uid:  # new, or made before accounts existed
                own_tree(home, account.uid, account.gid)
            home.chmod(0o700)
        if self.grader and not self.course_link.is_symlink():
            self.course_link.symlink_to(self.course_root)
        return await super().start()

    def make_preexec_fn(self, name):
        home, umask = str(self.home_dir), GRADER_UMASK if self.grader else STUDENT_UMASK
        become = set_user_setuid(self.unix_user, chdir=False) if self.isolate else None

        def preexec() -> None:
            os.umask(umask)
            if become is not None:
                become()
            os.chdir(home)

        return preexec

    def user_env(self, env: dict) -> dict:
        env.update(USER=self.unix_user, HOME=str(self.home_dir), SHELL=SHELL)
        return env
