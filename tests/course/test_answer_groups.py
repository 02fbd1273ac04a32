"""Answer groups: identical answers always together, the empty answer apart, paraphrases of one
meaning in one group and different meanings apart (the synthetic class's bank says which answers
mean the same), and ids that only a change of members changes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcopy.demo.answers import PARAPHRASES, SAID_BY_EVERY_CLASS
from viewcopy.five.groups import group_answers, group_id, normalised

WORDS = ["view", "copy", "stride", "strides", "storage", "bytes", "96", "(1, 6)", "reshape", "it"]


def by_member(groups) -> dict[str, str]:
    return {s: g.group for g in groups for s in g.students}


def bank(item: int) -> dict[str, tuple[str, str]]:
    """Every answer the synthetic bank has for `item`: a student per answer -> (meaning, text)."""
    answers = {}
    for meaning, texts in PARAPHRASES[item].items():
        for n, text in enumerate(texts):
            answers[f"{meaning}-{n}"] = (meaning, text)
    for meaning, text in SAID_BY_EVERY_CLASS.items():
        answers[meaning] = (meaning, text)
    return answers


@pytest.mark.parametrize("item", sorted(PARAPHRASES))
def test_paraphrases_of_one_meaning_share_a_group_and_meanings_do_not(item):
    answers = bank(item)
    groups = group_answers(item, {s: text for s, (_, text) in answers.items()})
    found = sorted(sorted(g.students) for g in groups)
    meanings: dict[str, list[str]] = {}
    for student, (meaning, _) in answers.items():
        meanings.setdefault(meaning, []).append(student)
    assert found == sorted(sorted(m) for m in meanings.values())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
        min_size=1,
        max_size=8,
    ),
    st.randoms(use_true_random=False),
)
def test_identical_answers_always_share_a_group_whatever_their_case_and_spacing(texts, rnd):
    answers = {}
    for n, text in enumerate(texts):
        answers[f"a{n}"] = text
        answers[f"b{n}"] = "  " + text.upper().replace(" ", "\n  ") + " ."
    groups = group_answers(21, answers)
    member = by_member(groups)
    assert sorted(member) == sorted(answers)
    for n in range(len(texts)):
        assert member[f"a{n}"] == member[f"b{n}"]
    for g in groups:
        assert normalised(g.representative) in {normalised(answers[s]) for s in g.students}


def test_an_empty_answer_is_a_group_of_its_own():
    answers = {"a": "", "b": "   \n", "c": "strides", "d": "strides and storage", "e": "."}
    groups = {g.students: g for g in group_answers(23, answers)}
    empty = next(g for g in groups.values() if "a" in g.students)
    assert set(empty.students) == {"a", "b", "e"} and empty.representative == ""
    assert all(
        "c" not in g.students or not set(g.students) & {"a", "b", "e"} for g in groups.values()
    )


def test_ids_depend_on_the_members_only_and_groups_come_largest_first():
    answers = {s: text for s, (_, text) in bank(22).items()}
    shuffled = list(answers.items())
    random.Random(7).shuffle(shuffled)
    first, again = group_answers(22, answers), group_answers(22, dict(shuffled))
    assert [(g.group, g.students) for g in first] == [(g.group, g.students) for g in again]
    assert [g.size for g in first] == sorted((g.size for g in first), reverse=True)
    assert all(g.group == group_id(22, g.students) for g in first)
    assert len({g.group for g in first}) == len(first)
    one = first[0]
    joined = group_answers(22, {**answers, "late": answers[one.students[0]]})
    assert one.group not in {g.group for g in joined}  # a new member: a new id
    assert group_id(22, one.students) != group_id(23, one.students)
