"""The graded checks the notebook's test cells call (`viewcopy.checks.<check>`), and `CHECKS`.

Each returns the credit as a number (nbgrader's partial credit) and prints the reason for every
point lost; none writes to stderr. Each credit carries a record of the check's inputs
(viewcopy.course.check_record): when grading, the grader runs the same function on that record in
its own process (viewcopy.plugins.trusted), passing its own `CheckContext` (notebook.context), and
its number is the one that counts. A graded cell passes none: the kernel's context is the default.
Graded cells reach this module as `viewcopy.checks`, the stable path the master's cells (kept in
every gradebook) name; `CHECKS` declares the checks the grader recomputes, once. What the checks
share lives beside them: how a credit is built (notebook.credit), the rules after
(notebook.rules_after), what makes an answer specific (notebook.specificity).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from viewcopy.course.check_record import Credit
from viewcopy.display.diagram import Diagram
from viewcopy.engine import storage
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.next_ops import measure_pool
from viewcopy.exercise.next_predictions import NEXT, hand_in_draw, parsed_sheet
from viewcopy.exercise.part import Part, Prediction
from viewcopy.exercise.predictions import TWENTY, parse_predictions
from viewcopy.exercise.production import PRODUCTION
from viewcopy.exercise.production_model import copy_lines, forward_listing, internal_copy_lines
from viewcopy.exercise.scoring import NEXT_PASS_MARK, POLICIES, judge_prediction, score_sheet
from viewcopy.locking.file import lock_path
from viewcopy.locking.flow import LockStatus
from viewcopy.locking.record import LockRecord
from viewcopy.notebook.cases import Answers, Case, answer_row, on_devices, run_case, the_twenty
from viewcopy.notebook.context import KERNEL, CheckContext
from viewcopy.notebook.credit import (
    Assessment,
    before_reveal,
    part_credit,
    proportional,
    record_of,
)
from viewcopy.notebook.miss_lines import miss_line, total_line
from viewcopy.notebook.rules_after import (
    judge_rule,
    judged_how,
    next_ops_held,
    not_locked,
    until_tested,
)
from viewcopy.notebook.specificity import specificity_points


def _display_html(markup: str) -> None:
    from IPython.display import HTML, display

    display(HTML(markup))


def _judged(predictions: object):
    """Parsed predictions, the measured truth, and (right, why) per item."""
    parsed = parse_predictions(predictions)
    table = measured_truth()
    return parsed, table, {item: judge_prediction(p, table[item]) for item, p in parsed.items()}


def prediction_credit(
    predictions: object, *, points: float = 5, context: CheckContext = KERNEL
) -> float:
    """Full credit at the course's line (16/20 right, or a balanced score of 80%) locked before
    looking, proportional below; none if changed, unlocked or not written out. States the base
    rate measured here, and says so when the sheet is no better than a constant one.

    Shows the static diagram of every missed item (it survives the feedback HTML).
    """
    record = record_of(prediction_credit, **{TWENTY.argument: predictions})
    table: dict = {}  # measured only once the check may judge
    missed: list[int] = []

    def assess(parsed: dict[int, Prediction], _) -> Assessment:
        table.update(measured_truth())
        judged = {item: judge_prediction(p, table[item]) for item, p in parsed.items()}
        missed.extend(item for item, (right, _) in judged.items() if not right)
        score = score_sheet(parsed, table)
        headline = [
            f"{score.correct}/{score.total} predictions right; balanced score "
            f"{score.balanced:.2f}. {score.base.sentence()}.{score.warning()}",
            f"Credited by {POLICIES[score.policy]}.",
        ]
        lines = []
        for item in missed:
            lines.append(
                f"  item {item} {catalogue.op(item).expr}: you said {parsed[item].verdict!r}; "
                f"{judged[item][1]}"
            )
            if explanation := table[item].explanation(parsed[item]):
                lines.append(f"    in strides: {explanation}")
        return headline, lines, score.share

    credit = part_credit(TWENTY, predictions, record, points, assess, context)
    for item in missed if context.in_kernel else ():
        _display_html(Diagram(table[item].evidence[("x", "cpu")]).html())
    return credit


def rules_after_credit(
    predictions: object, rules_after: object, *, points: float = 2, context: CheckContext = KERNEL
) -> float:
    """Credit per missed item whose rule after held, for a twenty locked before the reveal: one
    `prediction_credit` gives nothing for its lock (never locked, changed after it, ...) has no
    locked misses, and earns nothing here, in one sentence that says why. A rule must name what
    decides view or copy (exercise.rules: a report of running or looking earns nothing, next ops
    or not); then it earns in proportion to the hand-in's next ops of the item's family that its
    locked NEXT_PREDICTIONS got right, nothing while it locks none of them or nothing is drawn
    (untested), and in full where the draw holds no next op of that family. In the student's
    kernel, before the next ops are locked, it shows no score: it says how the rules get
    tested."""
    record = record_of(
        rules_after_credit, **{TWENTY.argument: predictions}, rules_after=rules_after
    )
    if (early := before_reveal(context, record)) is not None:
        return early
    if (reason := context.not_written(predictions, TWENTY.label)) is not None:
        print(f"{reason}: no rule can be judged against it.")
        return Credit(0.0, record)
    lock_record = context.lock_record()
    if not (lock := _twenty_lock(predictions, lock_record, context)).counts:
        print(not_locked(lock, points))
        return Credit(0.0, record)
    _, _, judged = _judged(predictions)
    missed = [item for item, (right, _) in judged.items() if not right]
    if not isinstance(rules_after, Mapping):
        print(f"RULES_AFTER must be a dict {{item: rule}}, got {type(rules_after).__name__}.")
        return Credit(0.0, record)
    held = next_ops_held(lock_record)
    found = {item: judge_rule(item, rules_after.get(item), held) for item in missed}
    if context.before_deadline and found and held and lock_record.part(NEXT.key) is None:
        return until_tested(found, record)
    for item, (_, _, line) in found.items():
        if line:
            print(f"  item {item} {catalogue.op(item).expr}: {line}")
    covered = sum(share for share, _, _ in found.values())
    print(
        f"{covered:.3g}/{len(missed)} missed items have a rule that held: on the locked next ops "
        "of their family, or (where your draw holds none of their family) by naming what decides "
        "it."
    )
    for line in judged_how({item: how for item, (_, how, _) in found.items()}, held):
        print(line)
    return Credit(proportional(points, covered, len(missed)), record)


def _twenty_lock(
    predictions: object, lock_record: LockRecord | None, context: CheckContext
) -> LockStatus:
    """Where the twenty stand against their lock, judged as `prediction_credit` judges them
    (notebook.credit.part_credit: the sheet parsed for this hand-in, its lock judged by the
    context); only `locked` earns. A twenty that does not parse fails the cell there too."""
    parsed = parsed_sheet(TWENTY, predictions, lock_record, lock_path(context.folder))
    return context.lock_status(TWENTY, parsed, lock_record)


def next_credit(
    next_predictions: object, *, points: float = 4, context: CheckContext = KERNEL
) -> float:
    """Full credit at 8/10 of this hand-in's next ops right, locked before looking, proportional
    below; none if changed after their lock, never locked, or not written out."""
    record = record_of(next_credit, **{NEXT.argument: next_predictions})

    def assess(parsed: dict[str, Prediction], lock_record: LockRecord | None) -> Assessment:
        ops = hand_in_draw(lock_record)
        measured = measure_pool()
        missed = [op for op in ops if parsed[op.id].verdict != measured[op.id].verdict]
        right = len(ops) - len(missed)
        headline = (
            f"{right}/{len(ops)} next ops right (full credit from {NEXT_PASS_MARK}/{len(ops)})."
        )
        lines = [
            f"  {op.id} {op.op} on {op.parent} ({op.family}): you said "
            f"{parsed[op.id].verdict!r}; measured {measured[op.id].verdict}"
            for op in missed
        ]
        return [headline], lines, min(right, NEXT_PASS_MARK) / NEXT_PASS_MARK

    return part_credit(NEXT, next_predictions, record, points, assess, context)


def production_credit(
    production: object, *, points: float = 2, context: CheckContext = KERNEL
) -> float:
    """Credit in proportion to the forward's lines predicted right (a layout copy or none),
    locked before the profile; a line whose only copies are a compute kernel's own is not
    graded (either answer stands). None if changed after its lock, never locked, or not
    written out."""
    record = record_of(production_credit, **{PRODUCTION.argument: production})

    def assess(parsed: dict[int, Prediction], _) -> Assessment:
        copying, ungraded = copy_lines(), internal_copy_lines() - copy_lines()
        listing = forward_listing()
        wrong = [
            (n, code)
            for n, code in listing
            if n not in ungraded and parsed[n].verdict != _measured(n, copying)
        ]
        lines = [
            f"  line {n} {code}: you said {parsed[n].verdict!r}; measured {_measured(n, copying)}"
            for n, code in wrong
        ]
        right = len(listing) - len(wrong)
        headline = [f"{right}/{len(listing)} lines of the forward predicted right (layout copies)."]
        if ungraded:
            headline.append(
                f"Lines {', '.join(map(str, sorted(ungraded)))} copy only inside a compute "
                "kernel (copies nobody wrote): not graded, either answer stands."
            )
        return headline, lines, right / len(listing)

    return part_credit(PRODUCTION, production, record, points, assess, context)


def _measured(number: int, copying: frozenset[int]) -> str:
    return "copy" if number in copying else "no copy"


def specificity_credit(
    answer: object, *, item: int, points: float = 1, context: CheckContext = KERNEL
) -> float:
    """Credit when an answer to 21-25 mentions strides, storage or a byte count (card rule 2);
    judged alike in the kernel and the grader (`context` changes nothing)."""
    record = record_of(specificity_credit, answer=answer)
    return Credit(specificity_points(answer, f"ANSWER_{item}", points), record)


def classify_credit(
    classify: Callable, cases: Iterable[Case], *, points: float, context: CheckContext = KERNEL
) -> float:
    """Credit in proportion to the cases classify gets right; each miss is listed by its hint.

    `classify` is the student's function, or (when the grader judges) the Answers it recorded;
    `context` changes nothing else. Before the twenty's reveal, in the kernel, it runs nothing
    and says so (its misses would name measured verdicts).
    """
    if (early := before_reveal(context, {"check": classify_credit.__name__})) is not None:
        return early
    cases = list(cases)
    if isinstance(classify, Answers):
        changed, results = classify.tampered, [classify.result(c) for c in cases]
    else:
        changed, results = storage.tampered(), [run_case(classify, c) for c in cases]
    record = {
        "check": classify_credit.__name__,
        "answers": [answer_row(r) for r in results],
        "tampered": list(changed),
    }
    if changed:
        print(
            f"torch was modified in this notebook ({', '.join(changed[:5])}); "
            "classify tests need the real torch, so they give no credit."
        )
        return Credit(0.0, record)
    right = sum(r.right for r in results)
    for r in results:
        if not r.right:
            print(miss_line(r))
    print(total_line(right, len(results)))
    return Credit(proportional(points, right, len(results)), record)


@dataclass(frozen=True)
class Check:
    """A graded check as the grader recomputes it from a cell's record: its function; the parts
    whose sheets it takes first, in order (the grader passes what the hand-in's answer cells
    write out, whatever the kernel recorded, and each is in the record under the part's
    `argument`); the arguments after them that the grader takes from the record; and, for
    classify, the student's function replayed from the record (the cases are the master's)."""

    function: Callable[..., float]
    parts: tuple[Part, ...] = ()
    recorded: tuple[str, ...] = ()
    replay: Callable[[Mapping], object] | None = None

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def inputs(self) -> tuple[str, ...]:
        """What its record must hold, besides its name."""
        return (*(part.argument for part in self.parts), *self.recorded)


CHECKS: dict[str, Check] = {
    check.name: check
    for check in (
        Check(prediction_credit, parts=(TWENTY,)),
        Check(rules_after_credit, parts=(TWENTY,), recorded=("rules_after",)),
        Check(specificity_credit, recorded=("answer",)),
        Check(classify_credit, replay=Answers.from_record),
        Check(next_credit, parts=(NEXT,)),
        Check(production_credit, parts=(PRODUCTION,)),
    )
}
"""Every check a graded cell may end with, by name: `viewcopy.checks.<name>(...)` in the master's
cells (and so in every gradebook), recomputed by the grader (viewcopy.plugins.trusted)."""

__all__ = [*CHECKS, "Case", "on_devices", "the_twenty"]
"""What graded cells call (`viewcopy.checks` re-exports exactly these); the grader's side is
imported by name from its own modules (CheckContext and local_lock from notebook.context, Answers
from notebook.cases)."""
