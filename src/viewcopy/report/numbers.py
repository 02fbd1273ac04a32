"""The class report's numbers, each a named type: what one student did (`StudentLine`), per
family (`FamilyTransfer`, `RulesHeld`), per item, classify case, question and production line
(`ItemMisses`, `TrapMisses`, `Specificity`, `ThoughtFree`), each op as a test item
(`ItemAnalysis`), the twenty as a test (`Reliability`), each graded part's scores
(`PartDistribution`), the hand-ins that look alike (`report.similarity.SimilarPair`), and the whole
class (`ClassReport`).
`report.build` fills them from a graded course; `report.rows`, `report.summary` and
`report.files` show them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from viewcopy.course.assignment import Grades
from viewcopy.course.handin import (
    LOCK_STATES,
    LOCKED,
    LOCKED_NOT_VERIFIED,
    LOCKED_VERIFIED,
    NO_SUBMISSION,
)
from viewcopy.exercise.scoring import CARD, PASS_MARK, BaseRate
from viewcopy.grading.versions import HandInVersions
from viewcopy.notebook.miss_lines import Miss
from viewcopy.report.item_statistics import ItemStatistics

if TYPE_CHECKING:  # similarity imports copydetect, which the report loads only to compare
    from viewcopy.report.similarity import SimilarPair

REFUSED = "tried to lock after the reveal"
"""The lock section's count of students whose late locks the lock service refused."""
MEMORISED_BELOW = 0.6
"""A student is flagged as having memorised when the twenty pass and the next ops fall below
this share."""


@dataclass(frozen=True)
class FamilyTransfer:
    """One family of ops: how a student, or the class, did on the twenty in it and on the next
    ops in it."""

    family: str
    twenty_right: int = 0
    twenty_total: int = 0
    next_right: int = 0
    next_total: int = 0

    @property
    def twenty_share(self) -> float | None:
        return self.twenty_right / self.twenty_total if self.twenty_total else None

    @property
    def next_share(self) -> float | None:
        return self.next_right / self.next_total if self.next_total else None

    @property
    def gap(self) -> float | None:
        """How much worse the next ops went than the twenty (None without both)."""
        if self.twenty_share is None or self.next_share is None:
            return None
        return self.twenty_share - self.next_share

    def plus(self, other: FamilyTransfer) -> FamilyTransfer:
        """The two counts together (a class's, summed over its students)."""
        return FamilyTransfer(
            self.family,
            self.twenty_right + other.twenty_right,
            self.twenty_total + other.twenty_total,
            self.next_right + other.next_right,
            self.next_total + other.next_total,
        )


class RulesHeld(NamedTuple):
    """One family's rules after, for a student or summed over the class: the missed items with
    a rule after, how many of those were tested on locked next ops of their family, and how far
    they held there (each tested rule 0-1, summed)."""

    with_rule: int = 0
    tested: int = 0
    held: float = 0.0

    @property
    def held_share(self) -> float | None:
        """The share of the tested rules' next ops they held on; None when none was tested."""
        return self.held / self.tested if self.tested else None

    def plus(self, other: RulesHeld) -> RulesHeld:
        """The two counts together (a class's, summed over its students)."""
        return RulesHeld(*(a + b for a, b in zip(self, other, strict=True)))


class ThoughtFree(NamedTuple):
    """One line of the production forward that asks for a layout copy, and the students who
    predicted it free ("no copy")."""

    line: int
    code: str
    students: tuple[str, ...]


@dataclass(frozen=True)
class StudentLine:
    """One student: lock state, predictions right, gradebook scores and classify misses."""

    student: str
    lock: str
    right: int | None
    credited: int
    grades: Grades
    classify: Mapping[str, tuple[Miss, ...] | None]
    problems: tuple[str, ...]
    refused: int = 0
    """Locks the course's lock service refused because they came after the reveal."""
    balanced: float | None = None
    """The balanced score of the predictions (0-1), None when they are unreadable."""
    passes: bool = False
    """Locked before looking and over the course's line (the card's or the balanced one)."""
    flag: str = ""
    """`constant` or `no better than the base rate`: a score that is not knowledge."""
    next_right: int | None = None
    """Next ops predicted right (of `next_total`), None without a readable next sheet."""
    next_total: int = 0
    families: Mapping[str, FamilyTransfer] = field(default_factory=dict)
    """Per family, the twenty and the next ops (empty without a readable next sheet)."""
    rules: Mapping[str, RulesHeld] = field(default_factory=dict)
    """Per family, the missed items' rules after and how far they held."""
    given: float | None = None
    """The score the LMS is given (course.class_scores: the push's and the import file's
    number), None without one to give."""

    @property
    def rules_never_held(self) -> bool:
        """Rules after were tested on the next ops and none of them held at all."""
        tested = [r for r in self.rules.values() if r.tested]
        return bool(tested) and not any(r.held for r in tested)

    @property
    def memorised(self) -> bool:
        """High on the twenty, low on ops never seen: memorised, did not learn the rule."""
        return (
            self.right is not None and self.next_right is not None
            and self.right >= PASS_MARK and self.next_right < MEMORISED_BELOW * self.next_total
        )  # fmt: skip

    @property
    def auto_total(self) -> float:
        return sum(score or 0.0 for score, _ in self.grades.values())

    @property
    def max_total(self) -> float:
        return sum(maximum for _, maximum in self.grades.values())


@dataclass(frozen=True)
class ItemMisses:
    """Who mispredicted one item before looking, and what they said instead."""

    item: int
    expr: str
    truth: str
    said: Mapping[str, int]
    students: tuple[str, ...]

    @property
    def wrong(self) -> int:
        return len(self.students)


TWENTY_ITEMS, NEXT_ITEMS = "the twenty", "next ops"
"""The two parts whose operations are analysed as test items."""


@dataclass(frozen=True)
class ItemAnalysis:
    """One operation as a test item (report.item_analysis): its statistics over the students
    counted for its part, and the most common wrong verdict with the rules given for it (each
    distinct rule once, the most frequent first)."""

    part: str
    key: str
    expr: str
    statistics: ItemStatistics
    wrong_verdict: str = ""
    wrong_count: int = 0
    rules: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        """Discriminates below 0.2 or negatively: a misleading op or a measurement to look at."""
        return self.statistics.flagged

    @property
    def label(self) -> str:
        return f"{self.key} `{self.expr}`"


@dataclass(frozen=True)
class Reliability:
    """KR-20 of the twenty as a test over the students judged before looking (None: too few
    students, or totals that do not vary)."""

    students: int
    items: int
    kr20: float | None


@dataclass(frozen=True)
class PartDistribution:
    """One graded part's scores from the gradebook (exercise.graded_parts.course_parts): the
    score of each student all of whose cells in it are scored, and how many still wait for a
    score (a hand-graded cell not graded yet)."""

    part: str
    points: float
    scores: tuple[float, ...]
    waiting: int = 0

    @property
    def bins(self) -> tuple[tuple[float, float, int], ...]:
        """(low, high, students) per bin: one a point up to 10 points, else ten equal bins; each
        bin holds its low end, the last its high end too."""
        count = int(self.points) if self.points == int(self.points) and self.points <= 10 else 10
        count = max(count, 1)
        width = self.points / count if self.points else 1.0
        edges = [i * width for i in range(count + 1)]
        held = [0] * count
        for score in self.scores:
            held[min(int(score // width), count - 1)] += 1
        return tuple((edges[i], edges[i + 1], held[i]) for i in range(count))


@dataclass(frozen=True)
class TrapMisses:
    """One classify test case and the students it caught: wrong answers, and crashes or junk."""

    cell: str
    device: str
    hint: str
    wrong: tuple[str, ...]
    failed: tuple[str, ...]

    @property
    def caught(self) -> int:
        return len(self.wrong) + len(self.failed)


@dataclass(frozen=True)
class Specificity:
    """How many of the graded answers to one of the five are specific (the specific_N cell)."""

    item: int
    specific: int
    graded: int

    @property
    def fraction(self) -> float:
        return self.specific / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class ClassReport:
    """Everything the report shows, built by report.build; report.rows flattens it for the CSV."""

    assignment: str
    course: Path
    devices: tuple[str, ...]
    torch: str
    students: tuple[StudentLine, ...]
    judged: int
    misconceptions: tuple[ItemMisses, ...]
    classify_runs: Mapping[str, int]
    traps: tuple[TrapMisses, ...]
    specificity: tuple[Specificity, ...]
    lock_service: bool = False
    """The course runs a lock service: locks are verified against its records."""
    scoring: str = CARD
    """How the course credits the twenty (exercise.scoring.POLICIES)."""
    base: BaseRate | None = None
    """What answering the most frequent verdict to all twenty scores, measured here."""
    transfer: tuple[FamilyTransfer, ...] = ()
    """Per family, the class's share right on the twenty against on the next ops."""
    thought_free: tuple[ThoughtFree, ...] = ()
    """Each line of the production forward that copies, and who said "no copy"."""
    versions: Mapping[str, HandInVersions] = field(default_factory=dict)
    """Per student, the release that made their lock and the one that graded them."""
    items: tuple[ItemAnalysis, ...] = ()
    """The twenty, then the next ops students drew, as test items (report.item_analysis)."""
    reliability: Reliability | None = None
    """KR-20 of the twenty."""
    distributions: tuple[PartDistribution, ...] = ()
    """Per graded part, its scores from the gradebook."""
    similar: tuple[SimilarPair, ...] | None = ()
    """The pairs of hand-ins to look at, highest score first (report.similarity); None when they
    were not compared (no release to subtract the starter code from)."""

    def versions_said(self, student: str) -> tuple[str, str]:
        """(lock's release, grader's release) as the report writes them."""
        return self.versions.get(student, HandInVersions(None, None)).said()

    @property
    def releases(self) -> dict[str, Counter]:
        """How many locks each release made and how many hand-ins each graded (`before
        versions` counting those that recorded none)."""
        said = [self.versions_said(s.student) for s in self.handed_in]
        return {
            "locks": Counter(lock for lock, _ in said),
            "graded": Counter(graded for _, graded in said),
        }

    @property
    def rule_families(self) -> dict[str, RulesHeld]:
        """Per family (in name order), the class's rules after, summed over its students."""
        sums: dict[str, RulesHeld] = {}
        for s in self.students:
            for family, rules in s.rules.items():
                sums[family] = sums.get(family, RulesHeld()).plus(rules)
        return dict(sorted(sums.items()))

    @property
    def lock_counts(self) -> dict[str, int]:
        """Students per lock state; with a lock service, locks split into verified or not, and
        the students whose locks after the reveal it refused."""
        counts = Counter(s.lock for s in self.students)
        hidden = (LOCKED,) if self.lock_service else (LOCKED_VERIFIED, LOCKED_NOT_VERIFIED)
        states = {state: counts[state] for state in LOCK_STATES if state not in hidden}
        if self.lock_service:
            states[REFUSED] = sum(s.refused > 0 for s in self.students)
        return states

    @property
    def handed_in(self) -> tuple[StudentLine, ...]:
        return tuple(s for s in self.students if s.lock != NO_SUBMISSION)

    @property
    def problems(self) -> list[tuple[str, str]]:
        return [(s.student, p) for s in self.students for p in s.problems]
