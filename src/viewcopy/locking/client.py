"""Asking the course lock service to record a lock or a reveal; stdlib only, for student kernels.

The service answers with a receipt it signed; the notebook keeps it and cannot forge one, since
the key stays with the service. When the service cannot be reached, the lab goes on with a lock
marked not verified.
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request

REFUSALS = (401, 403, 409)


class LockServiceError(Exception):
    """The lock service did not record the lock or the reveal."""


class ServiceRefused(LockServiceError):
    """The service refused: the message is its reason; `status` says why (401: not a valid token,
    403: another student's, 409: refused on the merits, such as a lock after the reveal)."""

    def __init__(self, reason: str, status: int):
        super().__init__(reason)
        self.status = status


class ServiceUnreachable(LockServiceError):
    """The service could not be reached, or did not answer as the lock service."""


class LockServiceClient:
    """The lock service at `url`, as the student `token` identifies to it."""

    def __init__(self, url: str, token: str, timeout: float = 10, *, scheme: str = "Bearer"):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.scheme = scheme

    def lock(self, assignment: str, fingerprint: str, *, student: str | None = None) -> dict:
        """Record a lock of `fingerprint`; the service's signed receipt."""
        body = {"assignment": assignment, "fingerprint": fingerprint}
        return self.post("/v1/lock", body if student is None else {**body, "student": student})

    def reveal(self, assignment: str, fingerprint: str) -> dict:
        """Record the reveal of the locked `fingerprint`; the service's signed receipt."""
        return self.post("/v1/reveal", {"assignment": assignment, "fingerprint": fingerprint})

    def post(self, path: str, body: dict) -> dict:
        """POST `body` as JSON and return the answer's receipt."""
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "Authorization": f"{self.scheme} {self.token}",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = self.answer(response.read())
        except urllib.error.HTTPError as error:
            raise self.http_error(error.code, error.read()) from None
        except (OSError, http.client.HTTPException) as error:
            reason = str(getattr(error, "reason", error)) or type(error).__name__
            raise self.unreachable(reason) from error
        if not isinstance(answer.get("receipt"), dict):
            raise self.unreachable("its answer holds no receipt")
        return answer["receipt"]

    def answer(self, raw: bytes) -> dict:
        """The JSON object the service answered, or ServiceUnreachable."""
        try:
            answer = json.loads(raw)
        except ValueError:
            raise self.unreachable("it did not answer JSON") from None
        if not isinstance(answer, dict):
            raise self.unreachable("it did not answer a JSON object")
        return answer

    def http_error(self, status: int, raw: bytes) -> LockServiceError:
        """The error for an HTTP error status, with the service's own sentence."""
        if status >= 500:
            return self.unreachable(f"it failed with HTTP {status}")
        reason = self.answer(raw).get("error") or f"HTTP {status}"
        if status in REFUSALS:
            return ServiceRefused(reason, status)
        return LockServiceError(f"the lock service at {self.url} rejected the request: {reason}")

    def unreachable(self, reason: str) -> ServiceUnreachable:
        """The error for a service that cannot be used, and what the lab does then."""
        return ServiceUnreachable(
            f"the lock service at {self.url} could not be used ({reason}): the lab can go on, "
            "with a lock marked not verified"
        )


def from_environment() -> LockServiceClient | None:
    """The client VIEWCOPY_LOCK_SERVICE and VIEWCOPY_LOCK_TOKEN name, None without a service."""
    url = os.environ.get("VIEWCOPY_LOCK_SERVICE", "").strip()
    if not url:
        return None
    token = os.environ.get("VIEWCOPY_LOCK_TOKEN", "").strip()
    if token:
        return LockServiceClient(url, token)
    hub_token = os.environ.get("JUPYTERHUB_API_TOKEN", "").strip()
    if hub_token:
        return LockServiceClient(url, hub_token, scheme="token")
    raise LockServiceError(
        "VIEWCOPY_LOCK_SERVICE is set but VIEWCOPY_LOCK_TOKEN is not: ask your instructor for "
        "your token"
    )
