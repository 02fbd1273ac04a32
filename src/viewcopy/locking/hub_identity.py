"""Who sent a lock, when the lock service runs as a JupyterHub service: the hub says whose token it
is, and (when the course names its student group) whether that user is a student of the course.

A hub's answer is kept for `CACHE_S` seconds, so a class locking at once does not wait on the hub.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from viewcopy.locking.refusal import Refusal

HUB_TIMEOUT = 5
CACHE_S = 60.0
KEPT = 4096  # answers kept before the expired ones are dropped


@dataclass(frozen=True)
class Hub:
    """The hub's API, the service's own token (to read a user's groups) and the course's student
    group (None: any hub user may lock)."""

    api_url: str
    service_token: str
    group: str | None

    @classmethod
    def from_environment(cls) -> Hub | None:
        """The hub JupyterHub's service environment names, None outside a hub."""
        api_url = os.environ.get("JUPYTERHUB_API_URL", "").strip()
        if not api_url:
            return None
        group = os.environ.get("VIEWCOPY_LOCK_GROUP", "").strip() or None
        token = os.environ.get("JUPYTERHUB_API_TOKEN", "").strip()
        if group and not token:
            raise ValueError(
                f"VIEWCOPY_LOCK_GROUP={group} needs the service's own JUPYTERHUB_API_TOKEN to read "
                "a user's groups: run the lock service as a hub-managed service"
            )
        return cls(api_url.rstrip("/"), token, group)

    def get(self, path: str, authorization: str) -> dict:
        """GET the hub API's `path` with `authorization`; the JSON object it answered."""
        request = urllib.request.Request(
            f"{self.api_url}{path}", headers={"Authorization": authorization}
        )
        with urllib.request.urlopen(request, timeout=HUB_TIMEOUT) as response:
            model = json.loads(response.read())
        if not isinstance(model, dict):
            raise ValueError("the hub did not answer a JSON object")
        return model

    def owner(self, authorization: str) -> str:
        """The hub user whose token `authorization` (`token <...>`) carries, or 401."""
        try:
            model = self.get("/user", authorization)
        except urllib.error.HTTPError as error:
            refused = f"JupyterHub did not accept this token (HTTP {error.code})"
            raise Refusal(401, refused) from None
        except (OSError, ValueError) as error:
            raise Refusal(401, f"JupyterHub could not identify this token: {error}") from None
        name, kind = model.get("name"), model.get("kind", "user")
        if kind != "user":
            raise Refusal(401, f"this JupyterHub token belongs to a {kind}, not to a student")
        if not isinstance(name, str) or not name:
            raise Refusal(401, "JupyterHub answered without a user name for this token")
        return name

    def check_student(self, name: str) -> None:
        """403 unless `name` is in the course's student group (when the course names one)."""
        if self.group is None:
            return
        path = f"/users/{urllib.parse.quote(name, safe='')}"
        try:
            model = self.get(path, f"token {self.service_token}")
        except (OSError, ValueError) as error:
            unknown = f"JupyterHub could not say whether {name} is a student: {error}"
            raise Refusal(503, unknown) from None
        if self.group not in (model.get("groups") or []):
            raise Refusal(
                403,
                f"{name} is not a student of this course (JupyterHub group {self.group}): ask "
                "your instructor to add you",
            )


class HubIdentity:
    """The student behind a hub token, from the hub, each answer kept `ttl` seconds."""

    def __init__(self, hub: Hub, ttl: float = CACHE_S, clock: Callable[[], float] = time.monotonic):
        self.hub, self.ttl, self.clock = hub, ttl, clock
        self._known: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def student(self, authorization: str) -> str:
        """The student, or the hub's refusal (never cached: a fixed group takes effect at once)."""
        key = hashlib.sha256(authorization.encode()).hexdigest()
        with self._lock:
            known = self._known.get(key)
        if known is not None and known[1] > self.clock():
            return known[0]
        name = self.hub.owner(authorization)
        self.hub.check_student(name)
        now = self.clock()
        with self._lock:
            if len(self._known) >= KEPT:
                self._known = {k: v for k, v in self._known.items() if v[1] > now}
            self._known[key] = (name, now + self.ttl)
        return name
