"""A rule after is a rule (issue 46): it earns only when it names what decides view or copy
(strides, storage, contiguity, dtype, device, or the op's documented behaviour) in a clause that
is not a report of running or looking. The corpus (tests/data/rules/rules_after.json) is data
about language, students' phrasings typed by hand, each with the judgement it must get and why;
it says nothing of which verdict an op has."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from viewcopy.exercise import catalogue
from viewcopy.exercise.rules import DECIDES, EXAMPLE, rule_after_problem

CORPUS = json.loads(
    (Path(__file__).parents[1] / "data" / "rules" / "rules_after.json").read_text("utf-8")
)
EARNS = [entry for entry in CORPUS if entry["earns"]]
REFUSED = [entry for entry in CORPUS if not entry["earns"]]
CARD = '"I ran it" is not a rule. The rule has to work on the next op'


def label(entry: dict) -> str:
    return f"{entry['item']}: {entry['rule']!r}"


@pytest.mark.parametrize("entry", EARNS, ids=label)
def test_a_rule_that_names_what_decides_earns(entry):
    assert rule_after_problem(entry["rule"]) is None, entry["why"]


@pytest.mark.parametrize("entry", REFUSED, ids=label)
def test_a_sentence_that_names_nothing_that_decides_or_only_reports_earns_nothing(entry):
    problem = rule_after_problem(entry["rule"])
    assert problem is not None, entry["why"]
    assert DECIDES in problem and EXAMPLE in problem


def test_the_corpus_is_large_varied_and_covers_every_item_both_ways():
    assert len(EARNS) >= 40 and len(REFUSED) >= 40
    assert len({entry["rule"] for entry in CORPUS}) == len(CORPUS)
    assert all(entry["why"].strip() for entry in CORPUS)
    for op in catalogue.OPS:
        assert any(e["item"] == op.item for e in EARNS), op.item
        assert any(e["item"] == op.item for e in REFUSED), op.item


def test_a_report_is_refused_with_the_card_s_sentence_and_a_looked_at_concept_is_named_so():
    assert CARD in rule_after_problem("I ran it and it was the same object")
    assert "what you looked at is not why" not in rule_after_problem("I ran it")
    said = rule_after_problem("I ran it and the strides were the same")
    assert CARD in said and "what you looked at is not why it came out so" in said


def test_a_report_followed_by_a_reason_earns_and_one_followed_by_what_was_seen_does_not():
    assert (
        rule_after_problem("I ran it: transpose only swaps strides, so reshape must copy") is None
    )
    assert rule_after_problem("I ran it and the storage was shared") is not None


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ("copy", "gives a verdict, not what decides it"),
        ("x.t() is a view", "gives a verdict, not what decides it"),
        ("it depends", "names nothing that decides view or copy"),
        ("always check", "names nothing that decides view or copy"),
    ],
)
def test_a_verdict_and_a_non_rule_are_told_apart(rule, said):
    assert said in rule_after_problem(rule)


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        (None, "no rule in RULES_AFTER"),
        (3, "the rule must be a string, got int"),
        (("view", "strides"), "the rule must be a string, got tuple"),
        (b"strides", "the rule must be a string, got bytes"),
        ("", "the rule is empty"),
        (" \n\t", "the rule is empty"),
    ],
)
def test_what_is_no_text_is_refused_with_a_clear_sentence(rule, said):
    problem = rule_after_problem(rule)
    assert problem.startswith(said) and DECIDES in problem and EXAMPLE in problem


@pytest.mark.parametrize("entry", REFUSED, ids=label)
def test_every_refusal_is_one_sentence_a_student_can_act_on(entry):
    problem = rule_after_problem(entry["rule"])
    assert problem.strip() and "\n" not in problem
    for concept in ("strides", "storage", "contiguity", "dtype", "device", "behaviour"):
        assert concept in problem


def test_a_long_rule_is_quoted_short_in_its_refusal():
    problem = rule_after_problem("I ran it " * 40)
    quoted = re.match(r"^'([^']*)'", problem).group(1)
    assert quoted.startswith("I ran it I ran it") and quoted.endswith("...") and len(quoted) == 80
