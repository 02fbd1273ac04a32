"""Reading a student's NEXT_PREDICTIONS: one verdict and one rule for each of this hand-in's ten
next ops, keyed by the op's id (`"N07"`). The verdicts are `view`, `copy` or `error` (PyTorch
refuses: a real outcome the rules must predict too); the rule is the one from the student's sheet
that decides it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from viewcopy.exercise.predictions import (
    Prediction,
    PredictionError,
    normalize_verdict,
    rule_problem,
)

NAME = "NEXT_PREDICTIONS"
NEXT_VERDICTS: tuple[str, ...] = ("view", "copy", "error")
FORMAT_HINT = "write NEXT_PREDICTIONS = {'N07': ('view', 'the rule that decides it'), ...}"


def parse_next_predictions(value: object, ids: Iterable[str]) -> dict[str, Prediction]:
    """Validate NEXT_PREDICTIONS against this hand-in's ids, or raise one PredictionError naming
    every problem (missing and unknown ids, verdicts outside the three, empty rules)."""
    ids = list(ids)
    if not isinstance(value, Mapping):
        hint = f"must be a dict, got {type(value).__name__}; {FORMAT_HINT}"
        raise PredictionError([(NAME, hint)], NAME)
    problems: list[tuple[str, str]] = []
    parsed: dict[str, Prediction] = {}
    for key, entry in value.items():
        if key not in ids:
            close = difflib.get_close_matches(str(key), ids, n=1)
            fix = f"did you mean {close[0]!r}?" if close else f"this draw's ids are {_ids(ids)}"
            problems.append((f"id {key!r}", f"not one of your next ops; {fix}"))
            continue
        entry_problems = _entry_problems(key, entry)
        problems.extend((f"id {key}", p) for p in entry_problems)
        if not entry_problems:
            parsed[key] = Prediction(normalize_verdict(entry[0]), entry[1].strip())
    missing = [i for i in ids if i not in value]
    if missing:
        problems.append((f"ids {_ids(missing)}", "missing; every next op needs (verdict, rule)"))
    if problems:
        raise PredictionError(problems, NAME)
    return {i: parsed[i] for i in ids}


def _entry_problems(key: str, entry: object) -> list[str]:
    if not isinstance(entry, tuple | list) or len(entry) != 2:
        return [f"expected a pair (verdict, rule), got {entry!r}; write {key!r}: ('copy', 'rule')"]
    verdict, rule = entry
    problems = []
    if not isinstance(verdict, str) or normalize_verdict(verdict) not in NEXT_VERDICTS:
        choices = ", ".join(map(repr, NEXT_VERDICTS))
        problems.append(f"verdict {verdict!r} is not one of {choices}")
    if not isinstance(rule, str):
        problems.append(f"the rule must be a string, got {type(rule).__name__} {rule!r}")
    elif (problem := rule_problem(rule)) is not None:
        problems.append(problem)
    return problems


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(map(str, ids))
