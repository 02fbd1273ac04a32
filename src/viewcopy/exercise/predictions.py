"""Reading a student's PREDICTIONS: forgiving on case and spaces, exact about everything else."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass

from viewcopy.exercise.catalogue import CONDITIONS, ITEMS

VERDICT_CHOICES: tuple[str, ...] = ("view", "copy", *(f"sometimes: {c}" for c in CONDITIONS))
NON_RULES: frozenset[str] = frozenset(
    {"it depends", "depends", "i ran it", "ran it", "i tried it", "i checked", "i guessed", "guess"}
)
"""Phrases that explain nothing on the next op (lab card, rule 3)."""

FORMAT_HINT = "write PREDICTIONS = {1: ('view', 'slicing keeps storage; offset moves'), ...}"
RULE_HINT = "name what decides it: strides, storage, contiguity, dtype, device or bytes"


@dataclass(frozen=True)
class Prediction:
    """One item's prediction: a normalized verdict and the rule the student used."""

    verdict: str
    rule: str

    @property
    def condition(self) -> str | None:
        """The condition of a `sometimes: <condition>` verdict, else None."""
        head, _, condition = self.verdict.partition(": ")
        return condition if head == "sometimes" else None


class StudentError(ValueError):
    """An error whose message is the whole story: notebooks show it without a traceback."""

    def _render_traceback_(self) -> list[str]:
        """IPython's hook: the message alone, not frames inside viewcopy."""
        return f"{type(self).__name__}: {self}".splitlines()


class PredictionError(StudentError):
    """PREDICTIONS (or `name`) has problems; `problems` lists (where, what to fix) for every one."""

    def __init__(self, problems: list[tuple[str, str]], name: str = "PREDICTIONS"):
        self.problems = problems
        lines = [f"  {where}: {fix}" for where, fix in problems]
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(
            f"{count} in {name} (nothing was locked; your cell is unchanged):\n" + "\n".join(lines)
        )


def normalize_verdict(text: str) -> str:
    """Lower-case, single-spaced, with `sometimes:<condition>` spelled one way."""
    flat = " ".join(text.lower().split())
    match = re.fullmatch(r"sometimes\s*:\s*(\S+)", flat)
    return f"sometimes: {match.group(1)}" if match else flat


def _verdict_problem(raw: str) -> str | None:
    verdict = normalize_verdict(raw)
    if verdict in VERDICT_CHOICES:
        return None
    if not verdict:
        return "the verdict is empty; write " + _choices()
    if verdict == "sometimes":
        return "say which condition: " + ", ".join(repr(c) for c in VERDICT_CHOICES[2:])
    guess = difflib.get_close_matches(verdict, VERDICT_CHOICES, n=1, cutoff=0.5)
    hint = f"; did you mean {guess[0]!r}?" if guess else f"; write {_choices()}"
    return f"verdict {raw!r} is not one of {_choices()}{hint}"


def _choices() -> str:
    return ", ".join(repr(c) for c in VERDICT_CHOICES)


def rule_problem(rule: str) -> str | None:
    """Why `rule` is not a rule (empty, or only a non-rule like "it depends"), else None."""
    words = rule.lower().translate(str.maketrans("", "", string.punctuation)).split()
    if not words:
        return f"the rule is empty; {RULE_HINT}"
    if " ".join(words) in NON_RULES:
        return f"{rule.strip()!r} is not a rule that works on the next op; {RULE_HINT}"
    return None


def _entry_problems(item: int, entry: object) -> list[str]:
    if not isinstance(entry, (tuple, list)) or len(entry) != 2:
        return [
            f"expected a pair (verdict, rule), got {entry!r}; write {item}: ('view', 'your rule')"
        ]
    verdict, rule = entry
    problems = []
    if not isinstance(verdict, str):
        problems.append(f"the verdict must be a string, got {type(verdict).__name__} {verdict!r}")
    elif (problem := _verdict_problem(verdict)) is not None:
        problems.append(problem)
    if not isinstance(rule, str):
        problems.append(f"the rule must be a string, got {type(rule).__name__} {rule!r}")
    elif (problem := rule_problem(rule)) is not None:
        problems.append(problem)
    return problems


def parse_predictions(predictions: object) -> dict[int, Prediction]:
    """Validate and normalize PREDICTIONS, or raise one PredictionError naming every problem."""
    if not isinstance(predictions, Mapping):
        raise PredictionError(
            [("PREDICTIONS", f"must be a dict, got {type(predictions).__name__}; {FORMAT_HINT}")]
        )
    problems: list[tuple[str, str]] = []
    parsed: dict[int, Prediction] = {}
    for key, entry in predictions.items():
        if isinstance(key, bool) or not isinstance(key, int):
            fix = f"write it as the number {key.strip()}" if _is_digits(key) else "use 1 to 20"
            problems.append(
                (f"key {key!r}", f"items are numbered by int, not {type(key).__name__}; {fix}")
            )
            continue
        if key not in ITEMS:
            problems.append(
                (f"item {key}", f"there is no item {key}; the items are 1 to 20, remove it")
            )
            continue
        entry_problems = _entry_problems(key, entry)
        problems.extend((f"item {key}", p) for p in entry_problems)
        if not entry_problems:
            verdict, rule = entry
            parsed[key] = Prediction(normalize_verdict(verdict), rule.strip())
    written_as_text = {int(k) for k in predictions if _is_digits(k)}
    missing = [i for i in ITEMS if i not in predictions and i not in written_as_text]
    if missing:
        problems.append(
            (
                f"item{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}",
                "missing; every item 1-20 needs (verdict, rule)",
            )
        )
    if problems:
        raise PredictionError(problems)
    return dict(sorted(parsed.items()))


def _is_digits(key: object) -> bool:
    return isinstance(key, str) and key.strip().isdigit()


def fingerprint(parsed: Mapping[int, Prediction]) -> str:
    """A SHA-256 over the normalized predictions: equal exactly when verdicts and rules are."""
    canonical = {str(i): [p.verdict, p.rule] for i, p in sorted(parsed.items())}
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
