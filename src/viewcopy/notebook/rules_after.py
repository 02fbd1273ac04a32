"""The rules after: how far each missed item's rule held on the hand-in's locked next ops."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from viewcopy.course.check_record import Unscored
from viewcopy.exercise import catalogue
from viewcopy.exercise.next_ops import measure_pool
from viewcopy.exercise.next_predictions import NEXT, hand_in_draw
from viewcopy.exercise.predictions import TWENTY
from viewcopy.exercise.rules import rule_after_problem
from viewcopy.locking.canonical import matches
from viewcopy.locking.flow import LockState, LockStatus
from viewcopy.locking.record import LockRecord

Held = dict[str, list[tuple[str, bool | None]]]
"""Per family of a hand-in's draw, its next ops: (id, right by its locked NEXT_PREDICTIONS, or
None where they lock no answer to it)."""


NOT_LOCKED = {
    LockState.MISSING: "were never locked before the reveal",
    LockState.CHANGED: "changed after their lock",
    LockState.RELOCKED: "were locked only after their reveal had been shown",
    LockState.UNVERIFIED: "have a lock this course's lock service cannot vouch for",
    LockState.FORGED: "have a lock whose receipt is not the course's",
}
"""Why a twenty does not stand as locked before the reveal, by its lock's state (every state but
`LockState.LOCKED`)."""


def not_locked(lock: LockStatus, points: float) -> str:
    """The one sentence of a rules-after cell whose twenty do not stand as locked before the
    reveal (`lock`, as their own check judged it): no locked misses, so nothing to earn."""
    why = NOT_LOCKED[lock.state]
    return (
        f"0/{points:g} for rules after: your {TWENTY.label} {why}, so there were no locked "
        "misses to write rules after for (next time, lock them before you look, and change "
        "nothing after)."
    )


def until_tested(found: Mapping[int, tuple[float, str, str]], record: dict) -> Unscored:
    """Before the next ops are locked: what is not a rule yet, and how the rules get tested."""
    for item, (_, how, line) in found.items():
        if how == "no rule":
            print(f"  item {item} {catalogue.op(item).expr}: {line}")
    print(
        f"Your rules after are scored once your next ops test them: predict the ten below in "
        f"{NEXT.label} with these rules, lock them with viewcopy.{NEXT.lock_call}({NEXT.label}), "
        "then run this cell again. No score until then."
    )
    return Unscored(record)


def judge_rule(item: int, rule: object, held: Held) -> tuple[float, str, str]:
    """How far a missed item's rule after held (0-1), how it was judged (`no rule`, `tested`,
    `untested`, `words`), and what the cell says of it ("" for a rule that holds by its words)."""
    family = catalogue.op(item).family
    ops = held.get(family, [])
    if problem := rule_after_problem(rule):
        return 0.0, "no rule", problem
    if (share := held_share(ops)) is not None:
        right = [op_id for op_id, hit in ops if hit]
        wrong = [op_id for op_id, hit in ops if not hit]
        said = f"held on {', '.join(right)}" if right else "held on none of them"
        said += f"; not on {', '.join(wrong)}" if right and wrong else ""
        line = f"your rule was tested on your next ops of its family ({family}): it {said}."
        return share, "tested", line
    if ops:
        ids = ", ".join(op_id for op_id, _ in ops)
        line = (
            f"untested, so no credit: your draw holds next ops of its family ({family}), {ids}, "
            f"and no locked {NEXT.label} predicts them."
        )
        return 0.0, "untested", line
    if not held:
        line = (
            "untested, so no credit: no next ops are drawn to test it until the twenty are "
            "locked and revealed."
        )
        return 0.0, "untested", line
    return 1.0, "words", ""


def judged_how(how: Mapping[int, str], held: Held) -> list[str]:
    """The lines that say which rules are untested and how to test them, and which are judged
    by what they name, and why."""
    untested = [item for item, h in how.items() if h == "untested"]
    by_words = [item for item, h in how.items() if h == "words"]
    lines = []
    if untested:
        ids = sorted({op_id for i in untested for op_id, _ in held.get(catalogue.op(i).family, ())})
        which = f"your next ops of their families ({', '.join(ids)})" if held else (
            "your next ops (lock and reveal the twenty above first: they are drawn then)"
        )  # fmt: skip
        lines.append(
            f"Untested, so they earn nothing yet: items {', '.join(map(str, untested))}. Predict "
            f"{which} with these rules in {NEXT.label} below, lock them with "
            f"viewcopy.{NEXT.lock_call}({NEXT.label}), then run this cell again."
        )
    if by_words:
        lines.append(
            "Judged by what they name, your draw having no next op of their family: items "
            f"{', '.join(map(str, by_words))}."
        )
    return lines


def held_share(ops: Iterable[tuple[str, bool | None]]) -> float | None:
    """How far a rule held on the next ops of its family in the draw: the share of them its
    locked NEXT_PREDICTIONS got right (one it locks no answer to held nothing); None when it
    locks none of them, or there are none: nothing tested the rule."""
    ops = list(ops)
    if all(hit is None for _, hit in ops):
        return None
    return sum(hit is True for _, hit in ops) / len(ops)


def next_ops_held(record: LockRecord | None) -> Held:
    """Per family of this hand-in's draw, its next ops and whether its locked NEXT_PREDICTIONS
    got each one right (measured), None where they lock no answer to it (never locked, or a
    lock that does not match its fingerprint locks nothing); empty only without a draw (the
    twenty not locked and revealed)."""
    if record is None or not record.revealed_at:
        return {}
    held = record.part(NEXT.key)
    locked = held.answers if held and matches(held.answers, held.fingerprint) else {}
    measured = measure_pool() if locked else {}
    found: Held = {}
    for op in hand_in_draw(record):
        answer = locked.get(op.id)
        hit = None if answer is None else answer[0] == measured[op.id].verdict
        found.setdefault(op.family, []).append((op.id, hit))
    return found
