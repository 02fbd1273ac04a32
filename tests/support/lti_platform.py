"""A real LTI 1.3 platform on 127.0.0.1 for the LMS tests, built on PyPI's `lti1p3platform`.

The library does the platform's part of the standard: the registration and its key set, the
platform-initiated OIDC login, the launch message and its signed id_token, the client-credentials
token endpoint with its JWT validation (the tool's key set), and the AGS and NRPS handlers with
their bearer-token checks. This module keeps only what a platform stores (line items, scores, the
roster, in JSON files in its folder) and the HTTP around the library (starlette + uvicorn). It
runs in its own process, so it can go down mid-push and come back on the same port with the same
storage.

A platform has a flavour: what it makes of the scores it is sent, as that LMS does.
- "generic": stores every score; refuses (409) one older than the one it holds.
- "canvas" (canvas-lms `Lti::IMS::ScoresController`): each score POST is a new submission attempt
  unless its `https://canvas.instructure.com/lti/submission` extension says
  `new_submission: false`; a score without `scoreGiven` clears the grade; a timestamp before the
  one it holds is refused (400).
- "moodle" (`mod/lti/service/gradebookservices`): the grade shown is `scoreGiven` only when the
  score is `FullyGraded` (else none); a score whose timestamp, in whole seconds, is not after the
  one it holds is refused (409). Its results carry the held timestamp.

    platform = Platform.start(folder, flavour="moodle")   # the test's side
    python -m support.lti_platform FOLDER PORT   # the server's (Platform.start runs it)
"""

from __future__ import annotations

import contextlib
import html
import importlib.util
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROLES = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
LEARNER, INSTRUCTOR = f"{ROLES}Learner", f"{ROLES}Instructor"
TEACHING_ASSISTANT = (
    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
)
REQUIRED = "VIEWCOPY_REQUIRE_LTI"
PAGE = 3  # NRPS members per page: a class of more than three is read over several pages
GENERIC, CANVAS, MOODLE = "generic", "canvas", "moodle"
CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"


def require_lti() -> None:
    """lti1p3platform and the tool's libraries, or skip the module with one line naming what to
    install (fail where VIEWCOPY_REQUIRE_LTI=1, as in CI)."""
    from support.chromium import unavailable

    for package, module in (
        ("lti1p3platform", "lti1p3platform"),
        ("pylti1p3next", "pylti1p3"),
        ("jupyterhub-ltiauthenticator", "ltiauthenticator"),
        ("uvicorn", "uvicorn"),
    ):
        if importlib.util.find_spec(module) is None:
            unavailable(f"{package} is not installed (scripts/setup.sh installs it)", REQUIRED)


@dataclass(frozen=True)
class Member:
    """A person in the platform's course: their LMS id (`sub`), name, email and roles."""

    user_id: str
    name: str
    email: str
    roles: tuple[str, ...] = (LEARNER,)
    status: str = "Active"

    @property
    def given_name(self) -> str:
        return self.name.split()[0]

    @property
    def family_name(self) -> str:
        return " ".join(self.name.split()[1:])


# --- storage: JSON files in the platform's folder --------------------------------------------


def _read(path: Path, default: Any) -> Any:
    return json.loads(path.read_text()) if path.exists() else default


def _write(path: Path, value: Any) -> None:
    staged = path.with_suffix(".tmp")
    staged.write_text(json.dumps(value, indent=1))
    os.replace(staged, path)


def _rsa_pair() -> tuple[str, str]:
    """A new RSA key: (private PEM, public PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public.decode()


class Store:
    """The platform's folder: its settings and keys (made once), the tool it registered, the
    roster, line items and every score it accepted."""

    def __init__(self, folder: Path):
        self.folder = folder

    def settings(self) -> dict:
        return _read(self.folder / "platform.json", {})

    def make(self, port: int, flavour: str = GENERIC) -> None:
        """Settings and keys for a new platform on `port` (kept when they exist)."""
        if (self.folder / "platform.json").exists():
            return
        private, public = _rsa_pair()
        (self.folder / "platform_key.pem").write_text(private)
        (self.folder / "platform_public.pem").write_text(public)
        url = f"http://127.0.0.1:{port}"
        _write(
            self.folder / "platform.json",
            {
                "port": port,
                "url": url,
                "client_id": f"viewcopy-{secrets.token_hex(4)}",
                "deployment_id": f"deployment-{secrets.token_hex(3)}",
                "context_id": "course-101",
                "context_label": "PTMW",
                "context_title": "PyTorch and the memory wall",
                "resource_link_id": "resource-m01-02",
                "flavour": flavour,
            },
        )

    def flavour(self) -> str:
        return self.settings().get("flavour", GENERIC)

    def tool(self) -> dict:
        return _read(self.folder / "tool.json", {})

    def roster(self) -> list[dict]:
        return _read(self.folder / "roster.json", [])

    def lineitems(self) -> list[dict]:
        return _read(self.folder / "lineitems.json", [])

    def save_lineitems(self, items: list[dict]) -> None:
        _write(self.folder / "lineitems.json", items)

    def score_posts(self) -> list[dict]:
        path = self.folder / "scores.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def add_score(self, post: dict) -> None:
        with (self.folder / "scores.jsonl").open("a") as scores:
            scores.write(json.dumps(post) + "\n")
            scores.flush()
            os.fsync(scores.fileno())


# --- the server: lti1p3platform's classes over the store ---------------------------------------


def _platform_classes():  # noqa: C901 (the library's abstract classes, filled in together)
    """lti1p3platform's abstract platform, login, launch, AGS and NRPS, over a `Store`."""
    from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
    from lti1p3platform.membership import Context
    from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
    from lti1p3platform.oidc_login import OIDCLoginAbstract
    from lti1p3platform.registration import Registration
    from lti1p3platform.request import Request
    from lti1p3platform.score import UpdateScoreStatus
    from lti1p3platform.service_connector import (
        AssignmentsGradesService,
        NamesRoleProvisioningService,
    )

    class PlatformConf(LTI1P3PlatformConfAbstract):
        def init_platform_config(self, store: Store) -> None:
            self.store = store

        def get_registration_by_params(self, **kwargs: Any) -> Registration:
            settings, tool, folder = self.store.settings(), self.store.tool(), self.store.folder
            registration = (
                Registration()
                .set_iss(settings["url"])
                .set_client_id(settings["client_id"])
                .set_deployment_id(settings["deployment_id"])
                .set_platform_private_key((folder / "platform_key.pem").read_text())
                .set_platform_public_key((folder / "platform_public.pem").read_text())
            )
            if tool:
                registration.set_oidc_login_url(tool["login_url"])
                registration.set_launch_url(tool["launch_url"])
                if tool.get("key_set"):
                    registration.set_tool_key_set(tool["key_set"])
                if tool.get("key_set_url"):
                    registration.set_tool_key_set_url(tool["key_set_url"])
            return registration

    class PlainRequest(Request):
        def build_metadata(self, request: dict) -> dict:
            return request

    class Login(OIDCLoginAbstract):
        def set_lti_message_hint(self, **kwargs: Any) -> None:
            self._lti_message_hint = kwargs["resource_link_id"]

        def get_redirect(self, url: str) -> str:
            return url

    class Launch(LTIAdvantageMessageLaunchAbstract):
        def prepare_launch(self, preflight_response: dict) -> None:
            store: Store = self._platform_config.store
            member = _member(store, preflight_response.get("login_hint", ""))
            if member is None:
                raise PermissionError(f"no such user: {preflight_response.get('login_hint')!r}")
            _claims_of(self, store, member)

        def render_launch_form(self, launch_data: dict, **kwargs: Any) -> str:
            return _auto_submit(launch_data)

    class Ags(AssignmentsGradesService):
        def store(self) -> Store:
            return self.platform_config.store

        def find_lineitems(self, page=1, limit=None, line_item_id=None, **query: Any) -> dict:
            items = self.store().lineitems()
            for field in ("resource_link_id", "resource_id", "tag"):
                key = {"resource_link_id": "resourceLinkId", "resource_id": "resourceId"}.get(
                    field, field
                )
                if query.get(field):
                    items = [i for i in items if i.get(key) == query[field]]
            return {"content": items, "has_next": False}

        def find_lineitem(self, line_item_id: str) -> dict:
            from lti1p3platform.exceptions import LineItemNotFoundException

            for item in self.store().lineitems():
                if item["id"].rsplit("/", 1)[-1] == line_item_id:
                    return item
            raise LineItemNotFoundException(line_item_id)

        def create_lineitem(self, creation_data: dict) -> dict:
            items = self.store().lineitems()
            item = {**creation_data, "id": f"{self.ags.lineitems_url}/{len(items) + 1}"}
            self.store().save_lineitems([*items, item])
            return item

        def update_lineitem(self, update_data: dict) -> dict:
            item = {**self.find_lineitem(update_data["id"]), **update_data}
            item["id"] = f"{self.ags.lineitems_url}/{update_data['id']}"
            others = [i for i in self.store().lineitems() if i["id"] != item["id"]]
            self.store().save_lineitems([*others, item])
            return item

        def delete_lineitem(self, line_item_id: str) -> None:
            item = self.find_lineitem(line_item_id)
            self.store().save_lineitems([i for i in self.store().lineitems() if i != item])

        def update_score(self, line_item_id: str, score: dict) -> Any:
            item = self.find_lineitem(line_item_id)
            missing = {"userId", "timestamp", "activityProgress", "gradingProgress"} - set(score)
            if missing:
                from lti1p3platform.exceptions import LtiServiceException

                raise LtiServiceException(f"score lacks {sorted(missing)}", 400)
            earlier = _latest(self.store(), item["id"]).get(score["userId"])
            if earlier:
                _refuse_older(self.store().flavour(), earlier["timestamp"], score["timestamp"])
            self.store().add_score({"lineitem": item["id"], **score})
            return UpdateScoreStatus.SUCCESS if earlier else UpdateScoreStatus.CREATED

        def get_results(self, line_item_id: str, page=1, limit=None, user_id=None) -> dict:
            item = self.find_lineitem(line_item_id)
            flavour = self.store().flavour()
            results = [
                {
                    "id": f"{item['id']}/results/{user}",
                    "scoreOf": item["id"],
                    "userId": user,
                    "resultScore": held["grade"],
                    "resultMaximum": item["scoreMaximum"],
                    **({} if flavour == CANVAS else {"timestamp": held["timestamp"]}),
                }
                for user, held in _gradebook(self.store(), item["id"]).items()
                if user_id in (None, user)
            ]
            return {"content": results, "has_next": False}

    class Nrps(NamesRoleProvisioningService):
        def get_member_data_page(self, page=1, limit=None, role=None, since=None, **_) -> dict:
            members = self.platform_config.store.roster()
            size = int(limit or PAGE)
            first = (int(page) - 1) * size
            return {
                "content": members[first : first + size],
                "has_next": first + size < len(members),
            }

        def get_context_by_id(self) -> Context:
            settings = self.platform_config.store.settings()
            return Context(
                settings["context_id"], settings["context_label"], settings["context_title"]
            )

        def is_resource_link_valid(self, context_id: str, resource_link_id: str) -> bool:
            return resource_link_id == self.platform_config.store.settings()["resource_link_id"]

    return PlatformConf, PlainRequest, Login, Launch, Ags, Nrps


def _member(store: Store, user_id: str) -> Member | None:
    for row in store.roster():
        if row["user_id"] == user_id:
            return Member(
                row["user_id"], row["name"], row["email"], tuple(row["roles"]), row["status"]
            )
    return None


def _latest(store: Store, lineitem: str) -> dict[str, dict]:
    """The latest score per user of a line item."""
    latest: dict[str, dict] = {}
    for post in store.score_posts():
        if post["lineitem"] == lineitem:
            latest[post["userId"]] = post
    return latest


def _refuse_older(flavour: str, held: str, sent: str) -> None:
    """The LMS's refusal of a score no newer than the one it holds, as its flavour says it."""
    from lti1p3platform.exceptions import LtiServiceException

    if flavour == MOODLE and _second(held) >= _second(sent):
        raise LtiServiceException(f"Refusing score with an earlier timestamp ({sent})", 409)
    if flavour == CANVAS and _instant(sent) < _instant(held):
        raise LtiServiceException(
            f"Provided timestamp of {sent} before last updated timestamp of {held}", 400
        )
    if flavour == GENERIC and _instant(sent) < _instant(held):
        raise LtiServiceException(f"score older than the one held ({held})", 409)


def _instant(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _second(stamp: str) -> int:
    return int(_instant(stamp))


def _gradebook(store: Store, lineitem: str) -> dict[str, dict]:
    """What the LMS's gradebook shows per user of a line item, its flavour's rules applied to
    every score it accepted: the grade shown (None: none), the submission attempts recorded (Canvas)
    and the last score's timestamp."""
    flavour = store.flavour()
    shown: dict[str, dict] = {}
    for post in store.score_posts():
        if post["lineitem"] != lineitem:
            continue
        held = shown.setdefault(post["userId"], {"grade": None, "attempts": 0})
        held["timestamp"] = post["timestamp"]
        if flavour == CANVAS and post.get(CANVAS_SUBMISSION, {}).get("new_submission", True):
            held["attempts"] += 1
        final = flavour != MOODLE or post["gradingProgress"] == "FullyGraded"
        held["grade"] = post.get("scoreGiven") if final else None
    return shown


def _claims_of(launch, store: Store, member: Member) -> None:
    """The launch message's user, context, resource link, AGS and NRPS claims for `member`."""
    settings = store.settings()
    context_url = f"{settings['url']}/contexts/{settings['context_id']}"
    launch.set_user_data(member.user_id, list(member.roles), member.name, member.email)
    launch.lti_claim_user_data.update(
        {"given_name": member.given_name, "family_name": member.family_name}
    )
    launch.set_launch_context_claim(
        settings["context_id"],
        ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
        settings["context_title"],
        settings["context_label"],
    )
    launch.set_resource_link_claim(settings["resource_link_id"], title="View or copy (M01.02)")
    launch.set_ags(f"{context_url}/lineitems", allow_creating_lineitems=True)
    launch.set_nrps(f"{context_url}/memberships")


def _auto_submit(launch_data: dict) -> str:
    """The form a platform answers its authorization request with: it posts the id_token and
    the state to the tool's redirect URI."""
    fields = "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(launch_data[name])}">'
        for name in ("id_token", "state")
    )
    action = html.escape(launch_data["launch_url"])
    return (
        '<!doctype html><html lang="en"><head><title>Launching</title></head>'
        f'<body><form id="launch" method="post" action="{action}">{fields}'
        '<noscript><button type="submit">Continue</button></noscript></form>'
        "<script>document.getElementById('launch').submit()</script></body></html>"
    )


def app(folder: Path):
    """The platform's HTTP endpoints (starlette), over the library's classes."""
    import jwt
    from lti1p3platform.exceptions import LtiException, LtiServiceException
    from starlette.applications import Starlette
    from starlette.background import BackgroundTask
    from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
    from starlette.routing import Route

    PlatformConf, PlainRequest, Login, Launch, Ags, Nrps = _platform_classes()
    store = Store(folder)

    def conf():
        platform = PlatformConf(store=store)
        platform.get_registration()
        return platform

    async def plain(request) -> PlainRequest:
        body = await request.body()
        kind = request.headers.get("content-type", "")
        form = dict(urllib.parse.parse_qsl(body.decode())) if "form-urlencoded" in kind else {}
        return PlainRequest(
            {
                "method": request.method,
                "form_data": form,
                "get_data": dict(request.query_params),
                "headers": request.headers,
                "content_type": kind,
                "path": request.url.path,
                "json": json.loads(body) if body and "json" in kind else None,
            }
        )

    async def jwks(request):
        return JSONResponse(conf().get_jwks())

    async def launch(request):
        """The course's link clicked by `user`: the platform-initiated OIDC login."""
        login = Login(await plain(request), conf())
        login.set_lti_message_hint(resource_link_id=store.settings()["resource_link_id"])
        return RedirectResponse(login.initiate_login(request.query_params["user"]), 302)

    async def authorize(request):
        """The tool's authentication request: the signed launch, posted back to it."""
        data = await plain(request)
        preflight = data.get_data or data.form_data
        tool = store.tool()
        if preflight.get("redirect_uri") not in tool.get("redirect_uris", []):
            return HTMLResponse("redirect_uri is not registered for this tool", 400)
        message = Launch(data, conf())
        try:
            return HTMLResponse(message.lti_launch())
        except (PermissionError, AssertionError, Exception) as refused:  # noqa: B014
            return HTMLResponse(f"launch refused: {html.escape(str(refused))}", 400)

    async def token(request):
        form = (await plain(request)).form_data
        try:
            return JSONResponse(conf().get_access_token(form))
        except (LtiException, jwt.PyJWTError, KeyError, ValueError) as refused:
            return JSONResponse({"error": "invalid_client", "error_description": str(refused)}, 401)
        except Exception as refused:
            return JSONResponse(
                {"error": "invalid_request", "error_description": repr(refused)}, 400
            )

    def answer(result, next_link: str | None = None, background=None) -> Response:
        """An lti1p3platform Response as HTTP: a page's content as the body, its next page as
        a Link header (as AGS and NRPS specify)."""
        headers = {"Link": f'<{next_link}>; rel="next"'} if next_link else {}
        body = result.result
        if isinstance(body, dict) and "content" in body and "has_next" in body:
            if body.get("next"):
                headers["Link"] = f'<{body["next"]}>; rel="next"'
            body = body["content"]
        if isinstance(body, dict) and body.get("next"):
            headers["Link"] = f'<{body.pop("next")}>; rel="next"'
        if result.code >= 400 or body is None:
            content = json.dumps({"error": result.message}) if result.code >= 400 else ""
            return Response(content, result.code, headers, "application/json", background)
        return Response(json.dumps(body), result.code, headers, result.media_type, background)

    def service(kind, request, data, handle, **ids):
        settings = store.settings()
        context_url = f"{settings['url']}/contexts/{settings['context_id']}"
        try:
            if kind == "nrps":
                handler = Nrps(data, conf(), f"{context_url}/memberships")
            else:
                item = f"{context_url}/lineitems/{ids['item']}" if ids else None
                handler = Ags(data, conf(), f"{context_url}/lineitems", item)
            return handler.handle_resp(getattr(handler, handle), **ids_as_args(ids))
        except (LtiException, jwt.PyJWTError) as refused:
            from lti1p3platform.response import Response as LtiResponse

            return LtiResponse(None, 401, f"invalid token: {refused}")
        except LtiServiceException as refused:
            from lti1p3platform.response import Response as LtiResponse

            return LtiResponse(None, refused.status_code, refused.message)

    def ids_as_args(ids: dict) -> dict:
        return {"line_item_id": ids["item"]} if ids else {}

    async def lineitems(request):
        handle = "handle_create_lineitem" if request.method == "POST" else "handle_get_lineitems"
        return answer(service("ags", request, await plain(request), handle))

    async def lineitem(request):
        handle = {"GET": "handle_get_lineitem", "PUT": "handle_update_lineitem"}.get(
            request.method, "handle_delete_lineitem"
        )
        item = request.path_params["item"]
        return answer(service("ags", request, await plain(request), handle, item=item))

    async def scores(request):
        item = request.path_params["item"]
        if _busy(store):
            return JSONResponse({"error": "the gradebook is busy, try again"}, 503)
        result = service("ags", request, await plain(request), "handle_update_score", item=item)
        if result.code < 300 and _answer_lost(store):
            os._exit(3)  # stored, and the answer never leaves
        if result.code < 300 and _answer_fails(store):
            return JSONResponse({"error": "the gradebook failed after storing the score"}, 500)
        return answer(result, background=_outage(store) if result.code < 300 else None)

    async def results(request):
        item = request.path_params["item"]
        return answer(
            service("ags", request, await plain(request), "handle_get_results", item=item)
        )

    async def memberships(request):
        """NRPS, a page at a time: the platform's page size unless the tool asks for one."""
        data = await plain(request)
        query = data.get_data
        query.update({n: int(query[n]) for n in ("page", "limit") if n in query})
        query.setdefault("limit", PAGE)
        return answer(service("nrps", request, data, "handle_get_members"))

    def _busy(store: Store) -> bool:
        """Whether to answer this score POST 503 without storing it (`busy_for`)."""
        path = store.folder / "busy.json"
        remaining = _read(path, {}).get("remaining", 0)
        if remaining:
            _write(path, {"remaining": remaining - 1})
        return bool(remaining)

    def _runs_out(path: Path) -> bool:
        """Count one accepted score down in `path`; True (and the count gone) at its last."""
        remaining = _read(path, {}).get("remaining")
        if remaining is None:
            return False
        if remaining > 1:
            _write(path, {"remaining": remaining - 1})
            return False
        path.unlink()
        return True

    def _answer_lost(store: Store) -> bool:
        """Whether this accepted score POST is the one whose answer is lost (`lose_answer`)."""
        return _runs_out(store.folder / "lost.json")

    def _answer_fails(store: Store) -> bool:
        """Whether this accepted score POST is the one answered 500 (`store_then_fail`)."""
        return _runs_out(store.folder / "fails.json")

    def _outage(store: Store):
        """After an accepted score: exit once the outage's count runs out (`fail_after`)."""
        if not _runs_out(store.folder / "outage.json"):
            return None

        async def exit_now() -> None:  # on the event loop: no later request is read first
            os._exit(3)

        return BackgroundTask(exit_now)

    context = "/contexts/{context}"
    return Starlette(
        routes=[
            Route("/jwks", jwks),
            Route("/launch", launch),
            Route("/authorize", authorize, methods=["GET", "POST"]),
            Route("/token", token, methods=["POST"]),
            Route(f"{context}/lineitems", lineitems, methods=["GET", "POST"]),
            Route(f"{context}/lineitems/{{item}}", lineitem, methods=["GET", "PUT", "DELETE"]),
            Route(f"{context}/lineitems/{{item}}/scores", scores, methods=["POST"]),
            Route(f"{context}/lineitems/{{item}}/results", results),
            Route(f"{context}/memberships", memberships),
        ]
    )


# --- the test's side ---------------------------------------------------------------------------


class Platform:
    """The platform process, and what a test asks of it (the storage, read from its folder)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.store = Store(folder)
        self.process: subprocess.Popen | None = None

    @classmethod
    def start(cls, folder: Path, port: int | None = None, flavour: str = GENERIC) -> Platform:
        """A running platform in `folder` (its keys, ids and flavour made once)."""
        from support.servers import free_port

        folder.mkdir(parents=True, exist_ok=True)
        platform = cls(folder)
        platform.store.make(port or free_port(), flavour)
        platform.start_again()
        return platform

    def start_again(self) -> None:
        """The server on its port, once its key set answers."""
        tests = Path(__file__).resolve().parents[1]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
        }
        log = (self.folder / "server.log").open("a")
        command = [sys.executable, "-m", "support.lti_platform", str(self.folder)]
        self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{self.url}/jwks", timeout=1).close()
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"the LTI platform did not start:\n{(self.folder / 'server.log').read_text()}"
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def wait_down(self, timeout_s: float = 30) -> None:
        """Until the process has exited (after `fail_after`)."""
        self.process.wait(timeout=timeout_s)

    @property
    def url(self) -> str:
        return self.store.settings()["url"]

    issuer = url

    def _setting(self, name: str) -> str:
        return self.store.settings()[name]

    @property
    def client_id(self) -> str:
        return self._setting("client_id")

    @property
    def deployment_id(self) -> str:
        return self._setting("deployment_id")

    @property
    def context_id(self) -> str:
        return self._setting("context_id")

    @property
    def lineitems_url(self) -> str:
        return f"{self.url}/contexts/{self.context_id}/lineitems"

    @property
    def memberships_url(self) -> str:
        return f"{self.url}/contexts/{self.context_id}/memberships"

    def registration(self) -> dict:
        """What the platform gives whoever registers the tool (registration.json's fields)."""
        return {
            "issuer": self.issuer,
            "client_id": self.client_id,
            "deployment_id": self.deployment_id,
            "key_set_url": f"{self.url}/jwks",
            "authorize_url": f"{self.url}/authorize",
            "token_url": f"{self.url}/token",
        }

    def register_tool(
        self,
        login_url: str,
        launch_url: str,
        redirect_uris: list[str] | None = None,
        key_set: dict | None = None,
        key_set_url: str | None = None,
    ) -> None:
        """What the LMS administrator types in: the tool's URLs and its public key set (by value
        or by URL). The redirect URIs default to the launch URL."""
        _write(
            self.folder / "tool.json",
            {
                "login_url": login_url,
                "launch_url": launch_url,
                "redirect_uris": redirect_uris or [launch_url],
                "key_set": key_set,
                "key_set_url": key_set_url,
            },
        )

    def enrol(self, members: list[Member]) -> None:
        """The course's roster as the LMS holds it (replacing the last)."""
        _write(self.folder / "roster.json", [_member_row(m) for m in members])

    def launch_url(self, user_id: str) -> str:
        """Open in a browser as `user_id`: the course's link to the tool, clicked."""
        return f"{self.url}/launch?user={urllib.parse.quote(user_id)}"

    def lineitems(self) -> list[dict]:
        return self.store.lineitems()

    def score_posts(self) -> list[dict]:
        return self.store.score_posts()

    def results(self, lineitem_id: str) -> dict[str, dict]:
        """The latest score per user of a line item, as the LMS's gradebook shows it."""
        return _latest(self.store, lineitem_id)

    def gradebook(self, lineitem_id: str) -> dict[str, dict]:
        """What the LMS's gradebook shows per user: `grade` (None: no grade shown), `attempts`
        (the submission attempts Canvas recorded) and the held `timestamp`."""
        return _gradebook(self.store, lineitem_id)

    def lose_answer(self, scores: int) -> None:
        """The platform stores its `scores`-th next accepted score and exits before answering
        it: the tool never learns that it was stored."""
        _write(self.folder / "lost.json", {"remaining": scores})

    def store_then_fail(self, scores: int) -> None:
        """The platform stores its `scores`-th next accepted score and answers it 500 (failing
        after the store): the tool learns only that it failed, and tries again."""
        _write(self.folder / "fails.json", {"remaining": scores})

    def busy_for(self, scores: int) -> None:
        """The next `scores` score POSTs are answered 503 (the LMS failing) and not stored."""
        _write(self.folder / "busy.json", {"remaining": scores})

    def fail_after(self, scores: int) -> None:
        """The process exits right after answering its `scores`-th next score POST."""
        _write(self.folder / "outage.json", {"remaining": scores})

    def id_token(
        self,
        user_id: str,
        nonce: str,
        *,
        key: str | None = None,
        audience: str | None = None,
        expires_in: int = 300,
        omit: tuple[str, ...] = (),
        **claims: Any,
    ) -> str:
        """A launch id_token for `user_id` as this platform signs it, `claims` replaced and the
        claims in `omit` left out; or forged: signed with `key` (under the platform's kid), for
        another `audience`, already expired."""
        import jwt

        PlatformConf, PlainRequest, Login, Launch, Ags, Nrps = _platform_classes()
        conf = PlatformConf(store=self.store)
        registration = conf.get_registration()
        message = Launch(PlainRequest({}), conf)
        message._registration = registration
        member = _member(self.store, user_id)
        _claims_of(message, self.store, member)
        payload = message.get_launch_message()
        now = int(time.time())
        payload.update({"nonce": nonce, "iat": min(now, now + expires_in - 300)})
        payload["exp"] = now + expires_in
        if audience is not None:
            payload["aud"] = payload["azp"] = audience
        payload.update(claims)
        for claim in omit:
            payload.pop(claim, None)
        private = key or (self.folder / "platform_key.pem").read_text()
        return jwt.encode(payload, private, "RS256", headers={"kid": registration.get_kid()})

    @staticmethod
    def other_key() -> str:
        """A private key the platform never published."""
        return _rsa_pair()[0]


def _member_row(member: Member) -> dict:
    """A member as NRPS lists it."""
    row = asdict(member)
    row["roles"] = list(member.roles)
    row.update({"given_name": member.given_name, "family_name": member.family_name})
    return row


def main() -> None:
    import uvicorn

    folder = Path(sys.argv[1])
    settings = Store(folder).settings()
    uvicorn.run(app(folder), host="127.0.0.1", port=settings["port"], log_level="warning")


if __name__ == "__main__":
    main()
