"""Receipts the course lock service signs, and student tokens, checked offline with its HMAC key.

A receipt is a JSON payload plus an HMAC-SHA256 `signature` over its canonical form
(`locking.canonical`). Whoever holds
the service's key (the service and the grader, never a notebook) can verify it without the service.
"""

from __future__ import annotations

import hashlib
import hmac

from viewcopy.locking.canonical import canonical, signed_forms

SIGNATURE = "signature"


class ForgedReceipt(ValueError):
    """A receipt that the service's key did not sign as it stands."""


def hmac_sha256_hex(key: bytes, message: bytes) -> str:
    """The hex HMAC-SHA256 of `message` under `key`."""
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sign(key: bytes, payload: dict) -> dict:
    """The payload with its `signature`."""
    return {**payload, SIGNATURE: hmac_sha256_hex(key, canonical(payload))}


def verify(key: bytes, receipt: object) -> dict:
    """The receipt's payload if `key` signed it as it stands, else ForgedReceipt."""
    if not isinstance(receipt, dict):
        raise ForgedReceipt(f"a receipt is a JSON object, not {type(receipt).__name__}")
    signature = receipt.get(SIGNATURE)
    if not isinstance(signature, str):
        raise ForgedReceipt("the receipt has no signature: it was not issued by the lock service")
    payload = {k: v for k, v in receipt.items() if k != SIGNATURE}
    if not any(
        hmac.compare_digest(signature, hmac_sha256_hex(key, form)) for form in signed_forms(payload)
    ):
        raise ForgedReceipt(
            "the receipt's signature does not match: it was edited, or signed by another service"
        )
    return payload


def student_token(key: bytes, student: str) -> str:
    """The bearer token that identifies `student` to the service holding `key`."""
    return f"{student}:{hmac_sha256_hex(key, b'token:' + student.encode())[:32]}"


def token_student(key: bytes, token: str) -> str | None:
    """The student a genuine token names, None for a forged or malformed one."""
    student, _, tag = token.rpartition(":")
    if not student:
        return None
    expected = student_token(key, student).rpartition(":")[2]
    return student if hmac.compare_digest(tag.encode(), expected.encode()) else None
