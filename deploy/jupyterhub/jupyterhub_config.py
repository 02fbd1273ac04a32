"""JupyterHub for the View or copy course on one machine; `viewcopy hub` prepares its state folder
(VIEWCOPY_HUB_STATE) and runs this file. For a real course change the three marked parts: who logs
in, where servers run, and the URL (docs/jupyterhub.md).
"""

import os
import sys
from pathlib import Path

from viewcopy.hub.accounts import isolating, lock_user
from viewcopy.hub.state import HubState

c = get_config()  # noqa: F821 (provided by JupyterHub's config loader)

HERE = Path(__file__).resolve().parent
STATE = HubState.read(Path(os.environ["VIEWCOPY_HUB_STATE"]))
BIN = Path(sys.executable).parent
# nbgrader's group names: its JupyterHubAuthPlugin reads a user's courses from them
STUDENTS, GRADERS = f"nbgrader-{STATE.course_id}", f"formgrade-{STATE.course_id}"
PUBLIC = STATE.url  # [3] the URL: behind TLS, your hub's https:// URL
LOCK_SERVICE = "viewcopy-lock"

c.JupyterHub.bind_url = PUBLIC
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{STATE.hub_port}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{STATE.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [STATE.proxy]
c.ConfigurableHTTPProxy.pid_file = str(STATE.folder / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE.folder / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE.folder / "secrets" / "cookie_secret")
c.JupyterHub.cleanup_servers = True  # Ctrl-C stops every server and service it started

# [1] Who logs in. With the course's LMS registration (`viewcopy hub --lti`): LTI 1.3 launches
# from the LMS (viewcopy.hub.lti_login). The LMS role decides the group at each launch (Learner:
# students; Instructor or TeachingAssistant: graders), the hub name is the LMS's id (the
# registration's username_claim), and each launch's AGS and NRPS endpoints are kept in the
# course's lms/link.json. Without one: a shared password for the demo users (secrets/password).
# A real course without an LMS puts an OAuthenticator (GitHub, Google, its university's OIDC) here.
if STATE.lti:
    from viewcopy.hub.lti_login import CourseLTI13Authenticator

    c.JupyterHub.authenticator_class = CourseLTI13Authenticator
    c.CourseLTI13Authenticator.lms_folder = str(STATE.lms)
    c.CourseLTI13Authenticator.course_id = STATE.course_id
else:
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = STATE.secret("password")
    c.Authenticator.allowed_users = {*STATE.students, *STATE.graders, *STATE.others}
    c.JupyterHub.load_groups = {
        STUDENTS: {"users": list(STATE.students)},
        GRADERS: {"users": list(STATE.graders)},
    }

# [2] Where servers run: a process per person, as their own Unix user (made at first spawn; a
# hub that is not root runs them all as itself: a demo for one person), in STATE/home/<name>.
# Graders are in the course's staff group and find the course at ~/<course id>. A real course on
# more than one machine uses DockerSpawner or KubeSpawner (docs/jupyterhub.md#beyond-one-machine).
c.JupyterHub.spawner_class = "viewcopy.hub.spawner.CourseSpawner"
c.CourseSpawner.home_dir_template = str(STATE.home("{username}"))
c.CourseSpawner.course_root = str(STATE.course_root)
c.CourseSpawner.course_id = STATE.course_id
c.CourseSpawner.grader_group = GRADERS
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = c.Spawner.http_timeout = 180  # a cold JupyterLab on a busy machine
# The server's own token may read its user's groups (nbgrader's JupyterHubAuthPlugin lists the
# courses a user is in from them); graders' servers may also enrol students in the course.
c.Spawner.server_token_scopes = [
    "users:activity!user",
    "access:servers!server",
    "read:users:groups!user",
    f"groups!group={STUDENTS}",
    "list:groups",
    "list:users",
    "read:users",
]
c.Spawner.environment = {
    # The notebook's lock cell sends the user's own hub token here: no typed token.
    "VIEWCOPY_LOCK_SERVICE": f"{PUBLIC}/services/{LOCK_SERVICE}",
    "VIEWCOPY_EXCHANGE": str(STATE.exchange),
}


def role_environment(spawner) -> None:
    """Graders' servers hold the course and formgrader; everyone else's is a student's."""
    grader = GRADERS in {group.name for group in spawner.user.groups}
    spawner.environment = {
        **spawner.environment,
        "JUPYTER_CONFIG_PATH": str(HERE / "etc" / ("instructor" if grader else "student")),
        "VIEWCOPY_LAB_SETTINGS": str(HERE / "lab-settings"),
        **(
            {
                "VIEWCOPY_COURSE_ROOT": str(spawner.course_link),
                "VIEWCOPY_LOCK_DATA": str(STATE.lock_data),
            }
            if grader
            else {}
        ),
    }


c.Spawner.pre_spawn_hook = role_environment

# The course lock service, started and stopped by the hub, behind its proxy. It identifies a
# student by the hub token the notebook sends and refuses users outside the student group.
c.JupyterHub.services = [
    {
        "name": LOCK_SERVICE,
        "url": f"http://127.0.0.1:{STATE.lock_port}",
        "command": [
            str(BIN / "viewcopy"),
            "lock-service",
            "--data",
            str(STATE.lock_data),
            "--port",
            str(STATE.lock_port),
        ],
        "environment": {"VIEWCOPY_LOCK_GROUP": STUDENTS},
        # as a Unix user of its own where the hub is root: the key and records are its own
        **({"user": lock_user(STATE.course_id)} if isolating() else {}),
    },
    # A token for the instructor's scripts (secrets/admin_token): users, groups, tokens.
    {"name": "course-admin", "api_token": STATE.secret("admin_token")},
]
c.JupyterHub.load_roles = [
    {
        "name": LOCK_SERVICE,
        "services": [LOCK_SERVICE],
        "scopes": ["read:users:name", "read:users:groups"],
    },
    {
        "name": "course-admin",
        "services": ["course-admin"],
        "scopes": ["admin:users", "groups", "tokens"],
    },
    {  # graders enrol students (nbgrader's `db student add` puts them in the student group);
        # with LTI the launches keep the groups, and JupyterHub refuses changes through its API
        "name": "course-graders",
        "groups": [GRADERS],
        "scopes": [f"groups!group={STUDENTS}", "list:groups", "list:users", "read:users"],
    },
]
