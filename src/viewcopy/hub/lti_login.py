"""The hub's LTI 1.3 login: students and graders launch from the course's LMS.

jupyterhub-ltiauthenticator (1.6.3) does the launch as the standard says: the OIDC login with
its state and nonce cookies, the id_token's issuer, audience, expiry, age and nonce. What the
course adds, from its `lms/` folder:

- the id_token's signature checked with the platform's keys kept in memory (`PlatformKeys`),
  fetched again only for a key id they lack (ltiauthenticator fetches them at every launch);
- each launch taken once: its login state and nonce are spent on the hub (`SpentLaunches`),
  across restarts, and the state's cookie lasts the login's hour only;
- a resource link launch only, every claim read and checked in one place (`LaunchMessage`):
  anything else is refused with a sentence, never a 500;
- only the registration's deployments launch (ltiauthenticator reads no deployment id), as the
  file says at each launch: `viewcopy lms deployment add` needs no restart;
- the hub name is bound to the person (issuer and `sub`) at their first launch, offered from
  the registration's `username_claim` (default `sub`) and never given to anyone else
  (`lms.people`);
- the LMS role decides the group (`lms.vocabulary.course_role`, as for the roster): a Learner
  is a student (`nbgrader-<course>`), an Instructor or TeachingAssistant a grader
  (`formgrade-<course>`);
  JupyterHub keeps the groups as each launch says (`manage_groups`); anyone else is refused;
- every launch is recorded in `lms/link.json` (AGS and NRPS endpoints, the person);
- the course's public key set is served at `/hub/lti13/jwks`, for the LMS's key set URL.

A refusal's page says why in a sentence and shows no server folder: what the instructor needs
(the course folder in a command) goes to the hub's log.
"""

from __future__ import annotations

import json
import time
from functools import cached_property
from pathlib import Path
from urllib.parse import urlparse

import jwt
from jupyterhub.handlers import BaseHandler
from jupyterhub.utils import url_path_join
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import InvalidAudienceError, TokenError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler, LTI13LoginInitHandler
from ltiauthenticator.lti13.validator import LTI13LaunchValidator
from ltiauthenticator.utils import convert_request_to_dict
from tornado.web import HTTPError
from traitlets import Unicode, default

from viewcopy.hub.spent_launches import SPENT_FILE, AlreadySpent, SpentLaunches
from viewcopy.lms.keys import PlatformKeyError, PlatformKeys, ToolKey
from viewcopy.lms.launch_message import BadLaunch, LaunchMessage
from viewcopy.lms.link import CourseLink, LinkMismatch
from viewcopy.lms.people import BY_LAUNCH, NameTaken, bind
from viewcopy.lms.registration import REGISTRATION_FILE, Registration, UnknownDeployment
from viewcopy.lms.tool import CALLBACK_PATH, KEY_SET_PATH, LOGIN_PATH
from viewcopy.lms.vocabulary import GRADER, course_role

OWN_ENDPOINTS = tuple("/" + path for path in (LOGIN_PATH, CALLBACK_PATH, KEY_SET_PATH))
LOGIN_WINDOW_S = 3600
"""How long a login started at the hub may take to come back as a launch (its cookies' life)."""


def refused(status: int, sentence: str) -> HTTPError:
    """An HTTP refusal whose sentence JupyterHub's error page shows as written."""
    return HTTPError(status, "%s", sentence)


class CourseLoginInitHandler(LTI13LoginInitHandler):
    """ltiauthenticator's OIDC login initiation, refusing another platform, client or
    deployment before the round trip, and with cookies that survive a cross-site launch."""

    def post(self):
        registration = self.authenticator.registration
        asked = {
            "iss": (self.get_argument("iss", ""), registration.issuer),
            "client_id": (self.get_argument("client_id", ""), registration.client_id),
        }
        for name, (given, registered) in asked.items():
            if given and given != registered:
                raise refused(
                    400,
                    f"this hub is registered with {registration.issuer} (client "
                    f"{registration.client_id}); a login with {name} {given!r} is not one of "
                    "its launches",
                )
        deployment = self.get_argument("lti_deployment_id", "")
        if deployment:
            self.authenticator.check_deployment(deployment, "this login", status=400)
        super().post()

    get = post  # the OIDC login may come as GET or POST (the base binds its own post)

    def authorize_redirect(self, redirect_uri, login_hint, nonce, client_id, state, **hint):
        """The platform's client id even when the login initiation leaves it out."""
        client_id = client_id or self.authenticator.registration.client_id
        super().authorize_redirect(redirect_uri, login_hint, nonce, client_id, state, **hint)

    def get_state(self):
        """ltiauthenticator takes the next URL from the target link URI; one that names this
        login's own endpoints (as some LMS forms suggest) leads to the user's server instead
        of a GET on the callback."""
        target = urlparse(self.get_argument("target_link_uri", "")).path.rstrip("/")
        if target.endswith(OWN_ENDPOINTS):
            self.request.arguments.pop("target_link_uri", None)
        return super().get_state()

    def _set_oauth_cookie(self, key, value):
        """Over https the state and nonce cookies are SameSite=None: the platform posts the
        launch back from its own site, and browsers drop a Lax cookie on a cross-site POST."""
        cross_site = {}
        if self.authenticator.get_uri_scheme(self.request) == "https":
            cross_site = {"samesite": "None", "secure": True}
        days = LOGIN_WINDOW_S / 86400
        self._set_cookie(key, value, expires_days=days, httponly=True, encrypted=True, **cross_site)


class CourseCallbackHandler(LTI13CallbackHandler):
    """ltiauthenticator's launch, its id_token verified with the platform's keys as the
    authenticator keeps them rather than fetched anew at every launch, read as a resource link
    launch, and taken once."""

    def decode_and_validate_launch_request(self) -> dict:
        """The launch's id_token, verified and validated as ltiauthenticator does (ValidationError
        subclasses, which its `post` answers 400 or 401), its state and nonce then spent."""
        validator = LTI13LaunchValidator(parent=self.app)
        args = convert_request_to_dict(self.request.arguments)
        validator.validate_auth_response(args)
        self.check_state()  # the state of the login this browser started: no CSRF
        id_token = verified_id_token(
            args.get("id_token"), self.authenticator, leeway_s=validator.time_leeway
        )
        read_launch(id_token)  # before ltiauthenticator's checks, which take any shape on trust
        validator.validate_id_token(id_token)
        validator.validate_azp_claim(id_token, self.authenticator.client_id)
        self.check_nonce(id_token)  # the nonce of that login
        latest = max(id_token["exp"], id_token["iat"] + validator.max_age)
        self.spend(
            {"state": self._get_state_from_url(), "nonce": str(id_token["nonce"])},
            until=max(latest, time.time() + LOGIN_WINDOW_S) + validator.time_leeway,
        )
        return id_token

    def spend(self, values: dict[str, str], until: float) -> None:
        """Spend the launch's state and nonce, or refuse it as a replay."""
        try:
            self.authenticator.spent_launches.spend(values, until)
        except AlreadySpent as spent:
            self.log.warning("LTI launch refused: its %s was spent by an earlier launch", spent)
            raise refused(
                400,
                f"this launch was already used (its {spent} was taken before): each launch "
                "from the LMS opens the lab once; open the course's link in the LMS again",
            ) from None

    def _get_oauth_cookie(self, name: str) -> str:
        """The login's state or nonce cookie, if set within the login window, then cleared."""
        cookie = self.get_secure_cookie(name, max_age_days=LOGIN_WINDOW_S / 86400)
        self.clear_cookie(name)
        return (cookie or b"").decode("utf8", "replace")


def read_launch(id_token: dict) -> LaunchMessage:
    """The launch in `id_token`, or the 400 saying what the hub cannot serve."""
    try:
        return LaunchMessage.read(id_token)
    except BadLaunch as bad:
        raise refused(400, str(bad)) from None


def verified_id_token(encoded: str, authenticator, leeway_s: int) -> dict:
    """The claims of `encoded`, signed by one of the platform's keys, for this issuer and client;
    TokenError (InvalidAudienceError for another client) saying why not."""
    try:
        key = authenticator.platform_keys.signing_key(encoded)
        return jwt.decode(
            encoded,
            key.key,
            algorithms=authenticator.jwks_algorithms,
            audience=authenticator.client_id,
            issuer=authenticator.issuer,
            leeway=leeway_s,
        )
    except jwt.InvalidAudienceError as exc:
        raise InvalidAudienceError(str(exc)) from None
    except (jwt.PyJWTError, PlatformKeyError) as exc:
        raise TokenError(str(exc)) from None


class KeySetHandler(BaseHandler):
    """The course's public key set: the LMS checks the tool's signed token requests with it."""

    def get(self):
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "max-age=300")
        self.write(json.dumps(self.authenticator.tool_key().jwks()))


class CourseLTI13Authenticator(LTI13Authenticator):
    """LTI 1.3 for one course: the registration, key and link in `lms_folder`."""

    login_service = "your course's LMS"
    login_handler = CourseLoginInitHandler
    callback_handler = CourseCallbackHandler

    lms_folder = Unicode(
        config=True,
        help="The course's lms/ folder: registration.json, tool_key.pem, link.json.",
    )
    course_id = Unicode(config=True, help="The nbgrader course id (the groups' suffix).")

    @default("manage_groups")
    def _manage_groups(self):
        return True  # the LMS role decides the group at every launch

    @default("allow_all")
    def _allow_all(self):
        return True  # whoever the registered deployment launches with a course role

    @default("issuer")
    def _issuer(self):
        return self.registration.issuer

    @default("client_id")
    def _client_id(self):
        return {self.registration.client_id}

    @default("authorize_url")
    def _authorize_url(self):
        return self.registration.authorize_url

    @default("jwks_endpoint")
    def _jwks_endpoint(self):
        return self.registration.key_set_url

    @default("username_key")
    def _username_key(self):
        return self.registration.username_claim

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # a bad registration or key file stops the hub at its start, naming the file and field
        self.tool_key()
        self.log.info(
            "LTI 1.3: launches from %s, client %s, deployment(s) %s",
            *(self.registration.issuer, self.registration.client_id),
            ", ".join(self.registration.deployment_ids),
        )

    @property
    def lms(self) -> Path:
        """`lms_folder` as a path: what every reader of the course's LMS files takes."""
        return Path(self.lms_folder)

    @cached_property
    def registration(self) -> Registration:
        """The registration as the hub started with it."""
        return Registration.read(self.lms / REGISTRATION_FILE)

    @cached_property
    def platform_keys(self) -> PlatformKeys:
        """The platform's public keys, kept for the hub's life (fetched again on a new kid)."""
        return PlatformKeys(self.jwks_endpoint)

    @cached_property
    def spent_launches(self) -> SpentLaunches:
        """The states and nonces launches spent, in the course's lms/ folder."""
        return SpentLaunches(self.lms / SPENT_FILE)

    def check_deployment(self, deployment: object, what: str, status: int) -> None:
        """Refuse (HTTP `status`, saying how to add it) a deployment the registration lacks, as
        its file says now; the course folder to add it in goes to the log, not the page."""
        registration = Registration.read(self.lms / REGISTRATION_FILE)
        try:
            registration.check_deployment(deployment, self.lms.parent, what)
        except UnknownDeployment as unknown:
            self.log.warning("LTI launch refused: %s", unknown)
            try:
                registration.check_deployment(deployment, None, what)
            except UnknownDeployment as shown:
                raise refused(status, str(shown)) from None

    def tool_key(self) -> ToolKey:
        return ToolKey.ensure(self.lms)

    def get_handlers(self, app):
        return [*super().get_handlers(app), (url_path_join("", KEY_SET_PATH), KeySetHandler)]

    def offered_name(self, launch: LaunchMessage) -> str:
        """The value of the registration's claim for a person's hub name, as the LMS sent it; a
        launch without it is refused (no silent fallback on another claim)."""
        claim, claims = self.username_key, launch.claims
        if claim.startswith("custom_"):
            claim, claims = claim[len("custom_") :], launch.custom()
        value = claims.get(claim)
        if not isinstance(value, str | int) or not str(value).strip():
            self.log.warning(
                "LTI launch refused: no %r claim; set username_claim in %s to a claim the LMS "
                "sends (sub always is)",
                self.username_key,
                self.lms / REGISTRATION_FILE,
            )
            raise refused(
                400,
                f"the launch has no {self.username_key!r} claim to name you on the hub: ask the "
                "course's instructor to set username_claim in the course's registration to a "
                "claim the LMS sends (sub always is)",
            )
        return str(value)

    async def authenticate(self, handler, data=None):
        """The hub user for a validated launch: its deployment checked, its group from its
        roles, its name the person's binding, and the launch recorded in the course's link."""
        launch = read_launch(data or {})
        self.check_deployment(launch.deployment_id, "this launch", status=403)
        group = course_role(launch.roles)
        if group is None:
            raise refused(
                403,
                f"your LMS roles ({', '.join(launch.roles) or 'none'}) are neither a learner's nor "
                "an instructor's or teaching assistant's in this course: ask its instructor",
            )
        folder = self.lms
        try:
            CourseLink.check_context(folder, launch)
            name = bind(folder, launch.issuer, launch.sub, self.offered_name(launch), BY_LAUNCH)
            CourseLink.record_launch(folder, launch, name)
        except (LinkMismatch, NameTaken) as not_here:
            raise refused(403, str(not_here)) from None
        prefix = "formgrade" if group == GRADER else "nbgrader"
        return {"name": name, "groups": [f"{prefix}-{self.course_id}"], "auth_state": data}
