"""A part of the lab that a student predicts, locks and then sees measured: the twenty, the next
ops, the production model. Each is one `Part`, declared in its own module; this is the one path
that reads what a student wrote for any of them: forgiving on case and spaces, exact about
everything else, and naming every bad entry at once (nothing is locked then).
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from viewcopy.engine.student_error import StudentError
from viewcopy.locking.record import LockRecord, PartName

Key = int | str
"""What a part's entries are keyed by: an item or a line number, a next op's id."""

NON_RULES: frozenset[str] = frozenset(
    {"it depends", "depends", "i guessed", "guess", "guessed", "no idea", "dunno", "not sure"}
)
"""Phrases that explain nothing on the next op."""
ACTIONS: frozenset[str] = frozenset(
    {
        "ran", "run", "checked", "check", "measured", "measure", "tested", "test", "looked",
        "look", "tried", "try", "saw", "see", "printed", "print", "verified", "observed",
        "compared", "profiled", "executed", "inspected", "experimented", "confirmed",
    }
)  # fmt: skip
"""Verbs that say the student ran something, not why it came out so (lab card, rule 3)."""
TOOLS = re.compile(
    r"^(?:[\w.]*(?:data_?ptr|storage|untyped_storage|is_contiguous|stride|strides|_base|"
    r"id|profiler?|torch|code|cell|notebook|output|result|results|it|that|this|them)"
    r"(?:\(\))?|[\w.]+\(\))$"
)
"""What an "I ran it" names: a pointer, a function or the code (`data_ptr()`, `x.storage`)."""
FILLER: frozenset[str] = frozenset(
    {"i", "we", "a", "an", "the", "and", "then", "with", "on", "at", "by", "using", "via", "in",
     "of", "to", "out", "just", "so", "my", "its", "again", "for", "myself", "was", "is"}
)  # fmt: skip
RAN_IT = '"I ran it" is not a rule. The rule has to work on the next op'
"""The lab card's sentence (rule 3), said to every rule that only reports running something."""
RULE_HINT = "name what decides it: strides, storage, contiguity, dtype, device or bytes"


@dataclass(frozen=True)
class Prediction:
    """One prediction: a normalized verdict and the rule the student used ("" where the part
    asks for a verdict alone)."""

    verdict: str
    rule: str

    @property
    def condition(self) -> str | None:
        """The condition of a `sometimes: <condition>` verdict, else None."""
        head, _, condition = self.verdict.partition(": ")
        return condition if head == "sometimes" else None


class PredictionError(StudentError):
    """A sheet has problems; `problems` lists (where, what to fix) for every one."""

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


def rule_problem(rule: str) -> str | None:
    """Why `rule` is not a rule, else None: it is empty, a non-rule like "it depends", or it only
    says the student ran, checked, measured, tested or looked (at a pointer or a function)."""
    words = rule.lower().translate(str.maketrans("", "", string.punctuation)).split()
    if not words:
        return f"the rule is empty; {RULE_HINT}"
    if " ".join(words) in NON_RULES:
        return f"{rule.strip()!r} is not a rule that works on the next op; {RULE_HINT}"
    said = [w.strip(".,;:!?") for w in rule.lower().split()]
    if any(w in ACTIONS for w in said) and all(
        w in ACTIONS or w in FILLER or TOOLS.match(w) for w in said if w
    ):
        return f"{rule.strip()!r}: {RAN_IT}; {RULE_HINT}"
    return None


@dataclass(frozen=True)
class Part(PartName):
    """One predicted part: its variable (`label`) and answer cell, its lock (`key`, `lock_call`),
    the name its sheet goes by in the checks (`argument`), the verdicts it accepts, whether each
    entry carries a rule, and the keys a hand-in answers (`keys`: from its lock record, since the
    next ops are drawn from the twenty's lock; LockError while the part cannot be answered yet).
    The truth it is judged against is measured where the part is revealed and credited."""

    cell: str
    argument: str
    """The name of its sheet in a check's record (course.check_record), as every release's checks
    recorded it: the grader finds the sheet's input there and passes the sheet the answer cell
    writes out (notebook.checks.CHECKS declares which parts each check takes)."""
    choices: tuple[str, ...]
    with_rule: bool
    example: str
    """One entry as its cell writes it, for hints: `1: ('view', 'slicing keeps storage')`."""
    keys: Callable[[LockRecord | None], Sequence[Key]]

    def parse(self, value: object, keys: Sequence[Key]) -> dict[Key, Prediction]:
        """Validate and normalize a sheet for these keys, or raise one PredictionError naming
        every problem: missing and unknown keys, verdicts outside the choices, empty rules."""
        if not isinstance(value, Mapping):
            written = f"{self.label} = {{{self.example}, ...}}"
            fix = f"must be a dict, got {type(value).__name__}; write {written}"
            raise PredictionError([(self.label, fix)], self.label)
        keys = list(keys)
        problems: list[tuple[str, str]] = []
        parsed: dict[Key, Prediction] = {}
        for key, entry in value.items():
            if isinstance(key, bool) or key not in keys:
                problems.append(self._unknown(key, keys))
                continue
            entry_problems = self._entry_problems(key, entry)
            problems.extend((f"{self.noun} {key}", p) for p in entry_problems)
            if not entry_problems:
                verdict, rule = entry if self.with_rule else (entry, "")
                parsed[key] = Prediction(normalize_verdict(verdict), rule.strip())
        texts = {_digits(k) for k in value}
        written_as_text = {k for k in keys if isinstance(k, int) and str(k) in texts}
        missing = [k for k in keys if k not in value and k not in written_as_text]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            problems.append(
                (f"{self.noun}{plural} {', '.join(map(str, missing))}", f"missing; {self._needs()}")
            )
        if problems:
            raise PredictionError(problems, self.label)
        return {k: parsed[k] for k in keys}

    def _needs(self) -> str:
        shape = "(verdict, rule)" if self.with_rule else " or ".join(map(repr, self.choices))
        return f"every {self.noun} needs {shape}"

    def _unknown(self, key: object, keys: list[Key]) -> tuple[str, str]:
        if all(isinstance(k, int) for k in keys):
            span = f"{keys[0]} to {keys[-1]}"
            if isinstance(key, int) and not isinstance(key, bool):
                fix = f"there is no {self.noun} {key}; the {self.noun}s are {span}, remove it"
                return f"{self.noun} {key}", fix
            text = _digits(key)
            fix = f"write it as the number {text}" if text else f"use {span}"
            return (
                f"key {key!r}",
                f"{self.noun}s are numbered by int, not {type(key).__name__}; {fix}",
            )
        close = difflib.get_close_matches(str(key), list(map(str, keys)), n=1)
        fix = f"did you mean {close[0]!r}?" if close else f"they are {', '.join(map(str, keys))}"
        return f"{self.noun} {key!r}", f"not one of your {self.noun}s; {fix}"

    def _entry_problems(self, key: Key, entry: object) -> list[str]:
        if not self.with_rule:
            if not isinstance(entry, str):
                return [f"the verdict must be a string, got {type(entry).__name__} {entry!r}"]
            problem = self._verdict_problem(entry)
            return [problem] if problem else []
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            return [
                f"expected a pair (verdict, rule), got {entry!r}; "
                f"write {key!r}: ('{self.choices[0]}', 'your rule')"
            ]
        verdict, rule = entry
        problems = []
        if not isinstance(verdict, str):
            problems.append(
                f"the verdict must be a string, got {type(verdict).__name__} {verdict!r}"
            )
        elif (problem := self._verdict_problem(verdict)) is not None:
            problems.append(problem)
        if not isinstance(rule, str):
            problems.append(f"the rule must be a string, got {type(rule).__name__} {rule!r}")
        elif (problem := rule_problem(rule)) is not None:
            problems.append(problem)
        return problems

    def _verdict_problem(self, raw: str) -> str | None:
        verdict = normalize_verdict(raw)
        if verdict in self.choices:
            return None
        choices = ", ".join(map(repr, self.choices))
        if not verdict:
            return f"the verdict is empty; write {choices}"
        conditions = [c for c in self.choices if c.startswith("sometimes: ")]
        if verdict == "sometimes" and conditions:
            return "say which condition: " + ", ".join(map(repr, conditions))
        guess = difflib.get_close_matches(verdict, self.choices, n=1, cutoff=0.5)
        hint = f"; did you mean {guess[0]!r}?" if guess else f"; write {choices}"
        return f"verdict {raw!r} is not one of {choices}{hint}"


def _digits(key: object) -> str:
    """The number a key written as text spells, "" when it spells none."""
    return key.strip() if isinstance(key, str) and key.strip().isdigit() else ""
