"""How the lock service asks JupyterHub who sent a lock: the owner of the token, refused outside
the course's student group, each answer kept briefly so a class locking at once does not wait on
the hub. The hub here is a small HTTP server answering the two REST calls the service makes
(GET /user with the student's token, GET /users/NAME with the service's), counting them; the
real hub is driven end to end in tests/commands/test_viewcopy_hub.py.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from viewcopy.locking import hub_identity
from viewcopy.locking.hub_identity import Hub, HubIdentity
from viewcopy.locking.refusal import Refusal

SERVICE_TOKEN = "service-secret"
GROUP = "nbgrader-view_or_copy"


class HubAPI:
    """Users by token, groups by user; every request it answered, in order."""

    def __init__(self):
        self.owners = {"alice-token": ("alice", "user"), "svc-token": ("grader-bot", "service")}
        self.groups = {"alice": [GROUP], "guest": []}
        self.asked: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hub/api"

    def handler(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                api.asked.append(self.path)
                token = self.headers.get("Authorization", "").removeprefix("token ")
                if self.path == "/hub/api/user" and token in api.owners:
                    name, kind = api.owners[token]
                    return self.answer(200, {"name": name, "kind": kind})
                name = self.path.removeprefix("/hub/api/users/")
                if token == SERVICE_TOKEN and name in api.groups:
                    return self.answer(200, {"name": name, "groups": api.groups[name]})
                return self.answer(403, {"message": "no"})

            def answer(self, status: int, body: dict) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def api():
    hub = HubAPI()
    yield hub
    hub.server.shutdown()


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def identity(api: HubAPI, clock: Clock, group: str | None = GROUP) -> HubIdentity:
    return HubIdentity(Hub(api.url, SERVICE_TOKEN, group), ttl=60, clock=clock)


def test_the_hubs_answer_is_kept_for_the_ttl_then_asked_again(api):
    clock = Clock()
    students = identity(api, clock)
    assert students.student("token alice-token") == "alice"
    assert api.asked == ["/hub/api/user", "/hub/api/users/alice"]
    clock.now = 59
    assert students.student("token alice-token") == "alice"
    assert len(api.asked) == 2  # from the cache: the hub was not asked
    clock.now = 61
    assert students.student("token alice-token") == "alice"
    assert len(api.asked) == 4


def test_a_user_outside_the_student_group_is_refused_and_the_refusal_is_not_kept(api):
    api.owners["guest-token"] = ("guest", "user")
    students = identity(api, Clock())
    with pytest.raises(Refusal) as refused:
        students.student("token guest-token")
    assert refused.value.status == 403
    assert "guest is not a student of this course" in refused.value.error
    assert GROUP in refused.value.error
    api.groups["guest"] = [GROUP]  # the instructor adds them: it takes effect at once
    assert students.student("token guest-token") == "guest"


def test_without_a_group_any_hub_user_locks_and_groups_are_not_read(api):
    api.owners["guest-token"] = ("guest", "user")
    assert identity(api, Clock(), group=None).student("token guest-token") == "guest"
    assert api.asked == ["/hub/api/user"]


def test_tokens_the_hub_rejects_or_that_belong_to_a_service_are_refused(api):
    students = identity(api, Clock())
    with pytest.raises(Refusal) as unknown:
        students.student("token forged")
    assert unknown.value.status == 401 and "did not accept this token (HTTP 403)" in str(
        unknown.value
    )
    with pytest.raises(Refusal) as service:
        students.student("token svc-token")
    assert service.value.status == 401 and "belongs to a service" in service.value.error


def test_a_hub_that_cannot_be_reached_is_a_refusal_that_says_so(api):
    api.server.shutdown()
    api.server.server_close()
    with pytest.raises(Refusal) as unreachable:
        identity(api, Clock()).student("token alice-token")
    assert unreachable.value.status == 401
    assert "JupyterHub could not identify this token" in unreachable.value.error


def test_a_student_group_needs_the_services_own_token(monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_API_URL", "http://127.0.0.1:1/hub/api")
    monkeypatch.setenv("VIEWCOPY_LOCK_GROUP", GROUP)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    with pytest.raises(ValueError, match="needs the service's own JUPYTERHUB_API_TOKEN"):
        Hub.from_environment()
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", SERVICE_TOKEN)
    assert Hub.from_environment() == Hub("http://127.0.0.1:1/hub/api", SERVICE_TOKEN, GROUP)
    monkeypatch.delenv("JUPYTERHUB_API_URL")
    assert Hub.from_environment() is None


def test_expired_answers_are_dropped_once_many_are_kept(api, monkeypatch):
    monkeypatch.setattr(hub_identity, "KEPT", 2)
    for name in ("bea", "cy", "dee"):
        api.owners[f"{name}-token"] = (name, "user")
        api.groups[name] = [GROUP]
    clock = Clock()
    students = identity(api, clock)
    students.student("token bea-token")
    students.student("token cy-token")
    clock.now = 61  # both expired
    students.student("token dee-token")
    assert len(students._known) == 1
