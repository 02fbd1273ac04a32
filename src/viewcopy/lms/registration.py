"""What the LMS gives the person who registers the tool: `<course>/lms/registration.json`."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields
from pathlib import Path

REGISTRATION_FILE = "registration.json"
DEFAULT_USERNAME_CLAIM = "sub"
SAFE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def lms_folder(course_root: Path) -> Path:
    """Where a course keeps its LMS files."""
    return Path(course_root) / "lms"


def hub_name(value: str) -> str:
    """A JupyterHub-safe, stable name for an LMS id, which is also the student's gradebook id:
    the id itself when it is already lowercase letters, digits, `.`, `_` and `-` (64 at most),
    else a readable part of it and a hash of the whole (so two ids never share a name:
    `Ann|42` -> `ann-42-<10 hex>`)."""
    if SAFE_NAME.fullmatch(value):
        return value
    readable = re.sub(r"[^a-z0-9._-]+", "-", value.lower()).strip("-._")[:40] or "lms"
    return f"{readable}-{hashlib.sha256(value.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class Registration:
    """The platform as the LMS registered the tool: its issuer, the client and deployment ids it
    gave the tool, its key set, OIDC authorize and OAuth2 token URLs (the token URL is also the
    audience of the tool's token request), and the id_token claim that names a hub user."""

    issuer: str
    client_id: str
    deployment_id: str
    key_set_url: str
    authorize_url: str
    token_url: str
    username_claim: str = DEFAULT_USERNAME_CLAIM

    @classmethod
    def read(cls, path: Path) -> Registration:
        """The registration in `path`; ValueError naming the file and each bad or missing field."""
        path = Path(path)
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
        problems, values = [], {}
        for field in fields(cls):
            value = data.get(field.name, field.default if field.name == "username_claim" else None)
            if value is None:
                problems.append(f"{field.name} is missing")
            elif not isinstance(value, str) or not value.strip():
                problems.append(f"{field.name} must be a non-empty string, not {value!r}")
            else:
                values[field.name] = value.strip()
        for name in ("key_set_url", "authorize_url", "token_url"):
            url = values.get(name, "")
            if url and not url.startswith(("https://", "http://")):
                problems.append(f"{name} must be an http(s) URL, not {url!r}")
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            problems.append(f"unknown field(s) {', '.join(unknown)} (a typo?)")
        if problems:
            raise ValueError(f"{source}: {'; '.join(problems)}")
        return cls(**values)

    def as_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
