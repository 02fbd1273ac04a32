"""The lock's one canonical JSON, and the fingerprint of a part's answers under it.

Every fingerprint a lock holds and every receipt the lock service signs covers `canonical(...)`.
Two encodings of earlier releases (up to 70cf16b) are still read, never written: a later part's
answers were fingerprinted with ASCII escapes, and receipts were signed without spaces. Each
encoding is one-to-one, so a match under any of them means the same answers, or the same receipt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

Answers = Mapping[str, list[str]]
"""A part's answers as the lock file holds them: {key: [verdict, rule]} (the rule may be "")."""


def canonical(value: object) -> bytes:
    """The bytes a fingerprint or a signature covers: sorted keys, characters as written, UTF-8."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False).encode()


def fingerprint(answers: Answers) -> str:
    """The SHA-256 of a part's answers: equal exactly when every verdict and rule is."""
    return hashlib.sha256(canonical(dict(answers))).hexdigest()


def matches(answers: Answers, locked: str | None) -> bool:
    """Do `answers` have the fingerprint `locked`, as this release or an earlier one wrote it?"""
    escaped = json.dumps(dict(answers), sort_keys=True).encode()  # later parts, up to 70cf16b
    return locked in (fingerprint(answers), hashlib.sha256(escaped).hexdigest())


def signed_forms(payload: Mapping) -> tuple[bytes, ...]:
    """The bytes a receipt's signature may cover: canonical (what the service signs), or without
    spaces (what it signed up to 70cf16b)."""
    compact = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return canonical(dict(payload)), compact.encode()
