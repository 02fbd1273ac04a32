"""One canonical JSON for every fingerprint and signature, and the earlier encodings still read:
a lock or a receipt written by a release up to 70cf16b verifies as it did."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from viewcopy.locking.canonical import canonical, fingerprint, matches
from viewcopy.locking.receipts import ForgedReceipt, sign, verify

ANSWERS = {"N07": ["view", "même stockage, strides (6, 1)"], "N12": ["error", "strides refuse"]}


def test_a_fingerprint_is_the_sha256_of_the_canonical_json_as_the_twenty_always_were():
    earlier_twenty = json.dumps(ANSWERS, sort_keys=True, ensure_ascii=False).encode()
    assert canonical(ANSWERS) == earlier_twenty
    assert fingerprint(ANSWERS) == hashlib.sha256(earlier_twenty).hexdigest()


def test_a_later_part_fingerprinted_with_ascii_escapes_still_matches_and_only_its_answers():
    escaped = hashlib.sha256(json.dumps(ANSWERS, sort_keys=True).encode()).hexdigest()
    assert escaped != fingerprint(ANSWERS)  # the rules are not ASCII: the encodings differ
    assert matches(ANSWERS, escaped) and matches(ANSWERS, fingerprint(ANSWERS))
    changed = {**ANSWERS, "N12": ["copy", "strides refuse"]}
    assert not matches(changed, escaped) and not matches(changed, fingerprint(ANSWERS))
    assert not matches(ANSWERS, None)


def test_a_receipt_signed_without_spaces_still_verifies_and_an_edit_of_it_does_not():
    key = b"k" * 32
    payload = {"v": 1, "student": "zoé", "event": "lock", "fingerprint": "0" * 64}
    compact = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    earlier = {**payload, "signature": hmac.new(key, compact.encode(), "sha256").hexdigest()}
    assert verify(key, earlier) == payload
    assert verify(key, sign(key, payload)) == payload
    assert (
        sign(key, payload)["signature"] == hmac.new(key, canonical(payload), "sha256").hexdigest()
    )
    with pytest.raises(ForgedReceipt, match="edited"):
        verify(key, {**earlier, "student": "zoe"})
