"""The course's own RSA key: made once per course, kept private (mode 0600 in a 0700 folder),
never rewritten; the LMS is given its public JWK (kid = the RFC 7638 thumbprint)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

KEY_FILE = "tool_key.pem"
KEY_BITS = 2048


class KeyFileError(ValueError):
    """The course's key file cannot be used as it is (readable by others, or not a key)."""


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
        folder = Path(folder)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        path = folder / KEY_FILE
        if not path.exists():
            _write_once(path, _new_private_pem())
        return cls.load(path)

    @classmethod
    def load(cls, path: Path) -> ToolKey:
        from jwcrypto.jwk import JWK, InvalidJWKValue

        path = Path(path)
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


def _write_once(path: Path, pem: str) -> None:
    """Write a whole file with mode 0600 beside `path`, then link it into place only if `path`
    still does not exist (os.link never replaces), so nothing ever rewrites a key."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as sink:
            sink.write(pem)
            sink.flush()
            os.fsync(sink.fileno())
        # another process made the course's key first: that one is the key
        with contextlib.suppress(FileExistsError):
            os.link(partial, path)
    finally:
        partial.unlink(missing_ok=True)
