"""The keys of LTI 1.3: the course's own RSA key, made once per course, kept private (mode 0600
in a 0700 folder), never rewritten, the LMS given its public JWK (kid = the RFC 7638
thumbprint); and the platform's public keys, fetched from its key set URL and kept in memory,
fetched again only when a token names a key they lack (the platform rotated its key)."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from viewcopy.files.atomic import write_once

KEY_FILE = "tool_key.pem"
KEY_BITS = 2048
KEY_SET_TIMEOUT_S = 20.0


class KeyFileError(ValueError):
    """The course's key file cannot be used as it is (readable by others, or not a key)."""


class PlatformKeyError(ValueError):
    """No key of the platform's key set verifies this token, even fetched again."""


@dataclass(frozen=True)
class ToolKey:
    """The tool's private key for one course (PEM, PKCS#8) and its key id."""

    private_pem: str
    kid: str
    path: Path
    public_pem: str

    @classmethod
    def ensure(cls, folder: Path) -> ToolKey:
        """The key in `folder` (the course's lms/ folder), made there once if it has none.

        Two processes making it at once end with one key: the first one linked into place wins.
        A key file others can read is refused, with the fix.
        """
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        path = folder / KEY_FILE
        if not path.exists():  # generating a key takes a while: only where there is none
            write_once(path, _new_private_pem().encode("ascii"), mode=0o600)
        return cls.load(path)

    @classmethod
    def load(cls, path: Path) -> ToolKey:
        from jwcrypto.jwk import JWK, InvalidJWKValue

        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise KeyFileError(
                f"{path} is readable by others (mode {mode:04o}): run `chmod 600 {path}`; if it "
                "may have been copied, delete it, and give the LMS the new key (viewcopy lms keys)"
            )
        pem = path.read_text(encoding="ascii")
        try:
            jwk = JWK.from_pem(pem.encode("ascii"))
        except (ValueError, TypeError, InvalidJWKValue) as exc:
            raise KeyFileError(
                f"{path} is not a PEM private key ({exc}): delete it to make one"
            ) from None
        if not jwk.has_private or jwk.get("kty") != "RSA":
            raise KeyFileError(f"{path} is not an RSA private key: delete it to make one")
        public = jwk.export_to_pem(private_key=False).decode("ascii")
        return cls(private_pem=pem, kid=jwk.thumbprint(), path=path, public_pem=public)

    def public_jwk(self) -> dict:
        """The public half as a JWK, ready for a key set: RS256 signatures, kid the thumbprint."""
        from jwcrypto.jwk import JWK

        public = json.loads(JWK.from_pem(self.public_pem.encode("ascii")).export_public())
        return {**public, "kid": self.kid, "alg": "RS256", "use": "sig"}

    def jwks(self) -> dict:
        """The key set the tool publishes (`<hub>/hub/lti13/jwks`)."""
        return {"keys": [self.public_jwk()]}


def _new_private_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")


def fetch_key_set(url: str) -> dict:
    """The JWK set at `url`; PlatformKeyError saying what went wrong."""
    import requests

    try:
        answer = requests.get(url, timeout=KEY_SET_TIMEOUT_S)
        answer.raise_for_status()
        key_set = answer.json()
    except (requests.RequestException, ValueError) as exc:
        raise PlatformKeyError(
            f"the LMS's key set {url} cannot be read ({exc}): check key_set_url in the course's "
            "registration.json, and that the LMS is reachable from this machine"
        ) from None
    if not isinstance(key_set, dict) or not isinstance(key_set.get("keys"), list):
        raise PlatformKeyError(f"{url} is not a JWK set (no list of keys): check key_set_url")
    return key_set


class PlatformKeys:
    """The platform's public keys, from its key set URL: fetched at the first token, kept in
    memory, and fetched again once when a token names a `kid` they lack (platforms rotate their
    keys, D2L hourly). Safe to share between threads."""

    def __init__(self, key_set_url: str, fetch: Callable[[str], dict] = fetch_key_set):
        self.key_set_url = key_set_url
        self._fetch = fetch
        self._keys: dict | None = None  # kid -> PyJWK
        self._lock = threading.Lock()

    def signing_key(self, token: str):
        """The PyJWK that should verify `token` (its header's kid; a token without one, the
        set's only key). PlatformKeyError when the set lacks it even fetched again."""
        import jwt

        kid = jwt.get_unverified_header(token).get("kid")
        with self._lock:
            key = self._find(kid) if self._keys is not None else None
            if key is None:
                self._keys = self._fetched()
                key = self._find(kid)
        if key is None:
            raise PlatformKeyError(
                f"the token is signed with key {kid!r}, which the LMS's key set "
                f"{self.key_set_url} does not hold, even fetched again just now: a token the "
                "LMS did not sign, or key_set_url in registration.json is not this LMS's"
            )
        return key

    def _find(self, kid: str | None):
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _fetched(self) -> dict:
        import jwt

        keys = {}
        for jwk in self._fetch(self.key_set_url)["keys"]:
            try:
                keys[jwk.get("kid")] = jwt.PyJWK(jwk)
            except (jwt.PyJWTError, AttributeError):
                continue  # a key of a kind this tool cannot use (an encryption key, say)
        return keys
