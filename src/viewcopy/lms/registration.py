"""What the LMS gives the person who registers the tool: `<course>/lms/registration.json`."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path

from viewcopy.files.atomic import write_atomically

REGISTRATION_FILE = "registration.json"
DEFAULT_USERNAME_CLAIM = "sub"
SAFE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def hub_name(value: str) -> str:
    """The JupyterHub-safe name an LMS id offers (`lms.people` binds it, and keeps it one
    person's): the id itself when it is already lowercase letters, digits, `.`, `_` and `-` (64
    at most), else a readable part of it and a hash of the whole (`Ann|42` -> `ann-42-<10 hex>`,
    `ann ` -> `ann-<10 hex>`)."""
    if SAFE_NAME.fullmatch(value):
        return value
    readable = re.sub(r"[^a-z0-9._-]+", "-", value.lower()).strip("-._")[:40] or "lms"
    return f"{readable}-{hashlib.sha256(value.encode()).hexdigest()[:10]}"


class UnknownDeployment(ValueError):
    """A launch, or the link a service call uses, from a deployment the registration lacks."""


@dataclass(frozen=True)
class Registration:
    """The platform as the LMS registered the tool: its issuer, the client id and the deployment
    ids it gave the tool (Canvas makes one per course-level install), its key set, OIDC authorize
    and OAuth2 token URLs (the token URL is also the audience of the tool's token request), and
    the id_token claim that names a hub user."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    key_set_url: str
    authorize_url: str
    token_url: str
    username_claim: str = DEFAULT_USERNAME_CLAIM

    @classmethod
    def read(cls, path: Path) -> Registration:
        """The registration in `path`; ValueError naming the file and each bad or missing field."""
        if not path.is_file():
            raise ValueError(
                f"{path} does not exist: write the values the LMS gave when the tool was "
                f"registered there ({', '.join(f.name for f in fields(cls))})"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} must hold a JSON object, not {type(data).__name__}")
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: dict, source: str = "the registration") -> Registration:
        """The registration in `data`, which may name one `deployment_id` (the older form) or
        a list of `deployment_ids`; ValueError naming `source` and each bad or missing field."""
        problems, values = [], {}
        for name in TEXT_FIELDS:
            value = data.get(name, DEFAULT_USERNAME_CLAIM if name == "username_claim" else None)
            problem = _text_problem(name, value)
            if problem:
                problems.append(problem)
            else:
                values[name] = value.strip()
        deployments, deployment_problems = _deployment_ids(data)
        problems += deployment_problems
        for name in ("key_set_url", "authorize_url", "token_url"):
            url = values.get(name, "")
            if url and not url.startswith(("https://", "http://")):
                problems.append(f"{name} must be an http(s) URL, not {url!r}")
        unknown = sorted(set(data) - {*TEXT_FIELDS, "deployment_ids", LEGACY_DEPLOYMENT})
        if unknown:
            problems.append(f"unknown field(s) {', '.join(unknown)} (a typo?)")
        if problems:
            raise ValueError(f"{source}: {'; '.join(problems)}")
        return cls(deployment_ids=deployments, **values)

    def as_dict(self) -> dict:
        """The registration as registration.json holds it (always the list of deployments)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**data, "deployment_ids": list(self.deployment_ids)}

    def write(self, path: Path) -> None:
        """Write it to `path` whole (a reader never sees half a file)."""
        write_atomically(path, json.dumps(self.as_dict(), indent=1) + "\n")

    def with_deployments(self, *deployment_ids: str) -> Registration:
        """This registration, also accepting `deployment_ids` (kept in the order added)."""
        return replace(self, deployment_ids=_unique((*self.deployment_ids, *deployment_ids)))

    def check_deployment(self, deployment_id: object, course: Path | None, what: str) -> None:
        """UnknownDeployment, naming the deployment and the command that adds it (with the
        `course` folder, where given), when `what` (a launch, the course's link) comes from a
        deployment this registration lacks."""
        if deployment_id in self.deployment_ids:
            return
        where = f" --course {course}`" if course is not None else "` in the course's folder"
        raise UnknownDeployment(
            f"{what} comes from deployment {deployment_id!r} of {self.issuer}, and this course "
            f"is registered for deployment(s) {', '.join(map(repr, self.deployment_ids))} only: "
            "if the LMS made that deployment for this tool (Canvas makes one per course-level "
            f"install), add it with `viewcopy lms deployment add {deployment_id}{where}"
        )


TEXT_FIELDS = ("issuer", "client_id", "key_set_url", "authorize_url", "token_url", "username_claim")
LEGACY_DEPLOYMENT = "deployment_id"


def _text_problem(name: str, value: object) -> str | None:
    if value is None:
        return f"{name} is missing"
    if not isinstance(value, str) or not value.strip():
        return f"{name} must be a non-empty string, not {value!r}"
    return None


def _deployment_ids(data: dict) -> tuple[tuple[str, ...], list[str]]:
    """The deployment ids in `data` (`deployment_ids`, and the older single `deployment_id`),
    and the problems with them."""
    listed, single = data.get("deployment_ids"), data.get(LEGACY_DEPLOYMENT)
    if listed is None and single is None:
        return (), ["deployment_ids is missing (the deployment id the LMS gave)"]
    problems = []
    if single is not None and _text_problem(LEGACY_DEPLOYMENT, single):
        problems.append(_text_problem(LEGACY_DEPLOYMENT, single))
    if listed is not None and (
        not isinstance(listed, list)
        or not listed
        or any(_text_problem("", item) for item in listed)
    ):
        problems.append(f"deployment_ids must be a list of non-empty strings, not {listed!r}")
    if problems:
        return (), problems
    return _unique([*(listed or ()), *([single] if single else [])]), []


def _unique(ids) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i.strip() for i in ids))
