"""The twenty and the next ops as test items: each hand-in's predictions judged against the truth
measured on this machine into a 0/1 matrix per part, analysed by report.item_statistics.

Who is counted:

- the twenty: every judged hand-in, i.e. whose predictions were written before looking as the
  report decides it (`HandIn.before_looking`: the genuine lock's, or the notebook's when it never
  locked); a forged lock, a lock after the reveal or unreadable predictions are not counted;
- the next ops: of those, each hand-in whose next sheet is readable and unchanged since its own
  lock (`locking.judge`, as grading judges it), and for each op only the students who drew it.

A part's rest score is the student's right answers in that part (the twenty; their ten next ops)
minus the item itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from viewcopy.course.handin import HandIn
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import ItemTruth
from viewcopy.exercise.next_ops import NextOp, measure_pool, pool
from viewcopy.exercise.next_predictions import NEXT
from viewcopy.exercise.part import Prediction
from viewcopy.exercise.scoring import judge_prediction
from viewcopy.locking.judge import LockPolicy, judge
from viewcopy.report.item_statistics import ItemStatistics, item_statistics, kr20
from viewcopy.report.numbers import NEXT_ITEMS, TWENTY_ITEMS, ItemAnalysis, Reliability

Sheet = Mapping[object, Prediction]


def twenty_items(
    judged: Sequence[HandIn], table: Mapping[int, ItemTruth]
) -> tuple[tuple[ItemAnalysis, ...], Reliability]:
    """The twenty as items over the judged hand-ins, and KR-20 of the twenty as a test."""
    sheets = [h.before_looking for h in judged]
    keys = list(catalogue.ITEMS)
    matrix = _matrix(sheets, keys, lambda item, p: judge_prediction(p, table[item])[0])
    found = item_statistics(matrix)
    items = tuple(
        _analysis(TWENTY_ITEMS, f"item {item}", catalogue.op(item).expr, stats, sheets, item, hits)
        for item, stats, hits in zip(keys, found, matrix.T, strict=True)
    )
    return items, Reliability(len(sheets), len(keys), kr20(matrix))


def next_items(
    judged: Sequence[HandIn], policy: LockPolicy, assignment: str
) -> tuple[ItemAnalysis, ...]:
    """Each next op some counted student drew, in pool order, over the students who drew it
    (judged against the pool measured here)."""
    sheets = [sheet for h in judged if (sheet := locked_next_sheet(h, policy, assignment))]
    if not sheets:
        return ()
    measured = measure_pool()
    drawn = {key for sheet in sheets for key in sheet}
    ops = [op for op in pool() if op.id in drawn]
    keys = [op.id for op in ops]
    matrix = _matrix(sheets, keys, lambda key, p: p.verdict == measured[key].verdict)
    return tuple(
        _analysis(NEXT_ITEMS, op.id, _expression(op), stats, sheets, op.id, hits)
        for op, stats, hits in zip(ops, item_statistics(matrix), matrix.T, strict=True)
    )


def locked_next_sheet(handin: HandIn, policy: LockPolicy, assignment: str) -> Sheet | None:
    """The hand-in's next sheet where it is readable and unchanged since its lock."""
    sheet = handin.later.get(NEXT.key)
    if not sheet or handin.record is None:
        return None
    status = judge(policy, NEXT, sheet, handin.record, handin.student, assignment)
    return sheet if status.counts else None


def _expression(op: NextOp) -> str:
    return op.op if op.parent == "x" else f"{op.op} on {op.parent}"


def _matrix(
    sheets: Sequence[Sheet], keys: Sequence, right: Callable[[object, Prediction], bool]
) -> np.ndarray:
    """Students x keys: 1 right, 0 wrong, NaN where the sheet has no such key."""
    matrix = np.full((len(sheets), len(keys)), np.nan)
    for row, sheet in enumerate(sheets):
        for column, key in enumerate(keys):
            if key in sheet:
                matrix[row, column] = float(right(key, sheet[key]))
    return matrix


def _analysis(
    part: str,
    key: str,
    expr: str,
    stats: ItemStatistics,
    sheets: Sequence[Sheet],
    item,
    hits: np.ndarray,
) -> ItemAnalysis:
    """The item's statistics with its most common wrong verdict and the rules given for it."""
    wrong = [sheets[s][item] for s in np.flatnonzero(hits == 0)]
    if not wrong:
        return ItemAnalysis(part, key, expr, stats)
    verdict, count = Counter(p.verdict for p in wrong).most_common(1)[0]
    rules = Counter(" ".join(p.rule.split()) for p in wrong if p.verdict == verdict and p.rule)
    given = tuple(rule for rule, _ in rules.most_common())
    return ItemAnalysis(part, key, expr, stats, verdict, count, given)
