"""The tool's connection to the LMS's services: pylti1p3's ServiceConnector (the OAuth2
client-credentials token, signed with the course's key) with what a command run needs around it:
a token cache, a timeout on every request, retries with exponential back-off when the LMS is
unreachable, failing (5xx) or busy (429), then one clear error; a refusal (4xx) said as one."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs

import requests
from pylti1p3.exception import LtiServiceException
from pylti1p3.registration import Registration as LibraryRegistration
from pylti1p3.service_connector import ServiceConnector, TServiceConnectorResponse

from viewcopy.lms.errors import LmsRefused, LmsUnreachable
from viewcopy.lms.keys import ToolKey
from viewcopy.lms.registration import Registration

USER_AGENT = "viewcopy-lms (pylti1p3next)"


@dataclass(frozen=True)
class Retries:
    """How hard to try: `tries` requests in all, waiting `first_delay_s`, then twice as long,
    each time (capped at `max_delay_s`); `timeout_s` for each request."""

    tries: int = 4
    first_delay_s: float = 0.5
    max_delay_s: float = 8.0
    timeout_s: float = 20.0

    def delay(self, attempt: int) -> float:
        return min(self.first_delay_s * 2**attempt, self.max_delay_s)


DEFAULT_RETRIES = Retries()


class _TimedSession(requests.Session):
    """A requests session whose every request has a timeout (pylti1p3 passes none)."""

    def __init__(self, timeout_s: float):
        super().__init__()
        self.timeout_s = timeout_s
        self.headers["User-Agent"] = USER_AGENT

    def request(self, method, url, **kwargs):
        kwargs.setdefault("timeout", self.timeout_s)
        return super().request(method, url, **kwargs)


class Connection(ServiceConnector):
    """pylti1p3's service connector for one course: its registration and key, tokens cached in
    memory for this run, every service request retried as `Retries` says."""

    def __init__(
        self,
        registration: Registration,
        key: ToolKey,
        retries: Retries = DEFAULT_RETRIES,
        sleep: Callable[[float], None] = time.sleep,
    ):
        library = (
            LibraryRegistration()
            .set_issuer(registration.issuer)
            .set_client_id(registration.client_id)
            .set_key_set_url(registration.key_set_url)
            .set_auth_login_url(registration.authorize_url)
            .set_auth_token_url(registration.token_url)
            .set_tool_private_key(key.private_pem)
            .set_tool_public_key(key.public_pem)
        )
        super().__init__(library, _TimedSession(retries.timeout_s))
        self.registration = registration
        self.retries = retries
        self._sleep = sleep
        self._tokens: dict[str, tuple[str, float]] = {}

    # pylti1p3next 2.0.2 leaves the token cache to the tool
    def _get_cached_access_token(self, scope_key: str) -> str | None:
        token, until = self._tokens.get(scope_key, ("", 0.0))
        return token if token and time.monotonic() < until else None

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float) -> None:
        lifetime = float(expires_in or 60) - 10  # renewed a little before the LMS drops it
        self._tokens[scope_key] = (access_token, time.monotonic() + max(lifetime, 0.0))

    def make_service_request(
        self, scopes: Sequence[str], url: str, *, put: bool = False, **kwargs
    ) -> TServiceConnectorResponse:
        """One service request (its token first), retried on a connection error, a 5xx or a 429;
        a token the LMS no longer honours (401) is renewed once. LmsUnreachable after the last
        try, LmsRefused for any other 4xx. `put`: a PUT of `data` (AGS's line item update)."""
        last: Exception | None = None
        renewed = False
        attempt = 0
        while attempt < self.retries.tries:
            try:
                if put:
                    return self._put(scopes, url, **kwargs)
                return super().make_service_request(scopes, url, **kwargs)
            except requests.RequestException as exc:  # refused, reset, timed out
                last = exc
            except LtiServiceException as exc:
                status = exc.response.status_code
                token_request = exc.response.url == self.registration.token_url
                if status == 401 and not token_request and not renewed:
                    self._tokens.clear()  # the LMS forgot or expired our token: ask again
                    renewed = True
                    continue
                if status < 500 and status != 429:
                    raise _refusal(exc.response, token_request, self.registration) from None
                last = exc
            attempt += 1
            if attempt < self.retries.tries:
                self._sleep(self.retries.delay(attempt - 1))
        raise LmsUnreachable(
            f"the LMS did not answer {url} after {self.retries.tries} tries over "
            f"{sum(self.retries.delay(a) for a in range(self.retries.tries - 1)):.1f} s "
            f"({_said(last)}): check that the LMS is up and reachable from this machine, then "
            "run the command again (nothing already sent is lost or sent twice)"
        )

    def _put(
        self, scopes: Sequence[str], url: str, *, data: str, content_type: str, accept: str
    ) -> TServiceConnectorResponse:
        """A PUT, which pylti1p3's service requests lack, made as they make a POST."""
        headers = {
            "Authorization": "Bearer " + self.get_access_token(scopes),
            "Accept": accept,
            "Content-Type": content_type,
        }
        answer = self._requests_session.put(url, data=data, headers=headers)
        if not answer.ok:
            raise LtiServiceException("There was an error making a service request.", answer)
        body = answer.json() if answer.content else None
        return {"headers": dict(answer.headers), "body": body, "next_page_url": None}


def _said(exc: Exception | None) -> str:
    if isinstance(exc, LtiServiceException):
        return f"HTTP {exc.response.status_code}: {_message(exc.response)}"
    return type(exc).__name__ if exc is not None else "no attempt"


def _message(response: requests.Response) -> str:
    """What the LMS said: the body's error description or message, else its text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason
    if isinstance(body, dict):
        for key in ("error_description", "message", "error", "detail"):
            if body.get(key):
                return str(body[key])[:300]
    return str(body)[:300]


def _refusal(response: requests.Response, token_request: bool, registration: Registration):
    said = _message(response)
    if token_request and _error_code(response) == "invalid_scope":
        return LmsRefused(_scopes_refused(response, registration), response.status_code)
    if token_request:
        return LmsRefused(
            f"the LMS refused the tool's token request ({response.status_code}: {said}): the "
            f"LMS at {registration.token_url} does not accept this course's key for client "
            f"{registration.client_id}; give the LMS the key `viewcopy lms keys` prints (or the "
            "hub's key set URL), and check client_id in registration.json",
            response.status_code,
        )
    return LmsRefused(
        f"the LMS refused {response.request.method} {response.url} ({response.status_code}: "
        f"{said}){_hint(response.status_code)}",
        response.status_code,
    )


def _error_code(response: requests.Response) -> str:
    """The OAuth2 `error` of a token endpoint's answer ('' if it has none)."""
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("error") or "") if isinstance(body, dict) else ""


def _scopes_refused(response: requests.Response, registration: Registration) -> str:
    """What to change in the LMS when it refuses the scopes the token request asked for (the
    key and client were fine: the registration lacks the services that grant them)."""
    asked = parse_qs(str(response.request.body or "")).get("scope", [""])[0].split()
    return (
        f"the LMS at {registration.token_url} refused the scopes the tool asked for "
        f"({' '.join(asked) or 'none named'}; it said: {_message(response)}): the tool's "
        f"registration there (client {registration.client_id}) lacks the services that grant "
        "them. In Canvas, edit the developer key and turn on its LTI Advantage Services (the "
        "gradebook's assignment data, submission results, and user data of the context); in "
        "Moodle, edit the tool and under Services set IMS LTI Assignment and Grade Services to "
        "'Use this service for grade sync and column management' and IMS LTI Names and Role "
        "Provisioning to 'Use this service to retrieve members' information'. Then run the "
        "command again"
    )


def _hint(status: int) -> str:
    return {
        403: ": the tool lacks the scope for this; in the LMS, give the tool the AGS and NRPS "
        "services",
        404: ": the LMS does not know this URL; launch the course from the LMS again so its "
        "endpoints are up to date",
    }.get(status, "")
