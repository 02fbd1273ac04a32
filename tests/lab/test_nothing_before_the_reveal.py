"""Before the twenty are locked and revealed, no call the notebook offers shows a measured
verdict: each public name of the notebook API is called in a fresh process (no measurement
cached), with two sheets that disagree everywhere, and watched by a TorchFunctionMode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from viewcopy.locking.gate import TRUTH_FIRST

PROBE = Path(__file__).parents[1] / "support" / "before_the_reveal.py"

GATED = {
    "debrief",
    "explorer",
    "what_did_you_pay",
    "checks.prediction_credit",
    "checks.rules_after_credit",
    "checks.classify_credit",
    "checks.production_credit",
    "checks.next_credit",
}
"""The calls that show measured verdicts, and so answer TRUTH_FIRST before the reveal."""
REFUSED = {"reveal", "revealed", "next_ops", "lock_next", "reveal_next", "lock_production",
           "profile_production"}  # fmt: skip
"""The calls that raise before the twenty's lock and reveal (a LockError that says what first)."""
OWN_WORDS = {"lock", "locked", "checks.specificity_credit"}
"""The calls that show the student's own sheet back (and so differ by sheet): the lock, with the
actual column hidden, and the written answer's echo."""


def probe(sheet: str, stage: str) -> dict:
    ran = subprocess.run(
        [sys.executable, str(PROBE), sheet, stage], capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def before() -> dict[str, dict]:
    return {sheet: probe(sheet, "before") for sheet in ("a", "b")}


def said(shown: dict) -> str:
    return "\n".join([shown["out"], *shown["displayed"], shown["returned"]])


def test_every_public_name_is_called(before):
    assert before["a"]["missing"] == [], "add the new public name to before_the_reveal.calls"


def test_no_tensor_op_runs_before_the_reveal(before):
    ran = {name: shown["ops"] for name, shown in before["a"].items() if name != "missing"}
    ran |= {name: shown["ops"] for name, shown in before["b"].items() if name != "missing"}
    assert {name: ops for name, ops in ran.items() if ops} == {}


def test_nothing_differs_by_sheet_but_the_sheet_a_lock_shows(before):
    names = [name for name in before["a"] if name not in ("missing", *OWN_WORDS)]
    differ = [name for name in names if said(before["a"][name]) != said(before["b"][name])]
    assert differ == []


def test_calls_that_show_measurements_say_the_lock_comes_first(before):
    for name in GATED:
        assert TRUTH_FIRST in said(before["a"][name]), name


def test_calls_after_the_lock_refuse_and_say_what_comes_first(before):
    for name in REFUSED:
        returned = before["a"][name]["returned"]
        assert returned.startswith("raised LockError:"), (name, returned)
        assert "lock" in returned.lower() and "Traceback" not in returned, (name, returned)


def test_a_locked_sheet_shows_no_actual_verdict(before):
    for sheet in ("a", "b"):
        shown = said(before[sheet]["lock"])
        assert "actual" in shown.lower() and "hidden" in shown.lower(), shown[:2000]


def test_after_the_reveal_the_same_calls_show_what_was_measured(before):
    after = probe("a", "after")  # the reveal measured, so later calls may read its cache
    for name in GATED:
        assert TRUTH_FIRST not in said(after[name]), name
        assert said(after[name]) != said(before["a"][name]), name
