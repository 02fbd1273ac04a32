"""What the instructor's master notebook and the tests use, never the students' API: the sheet
of predictions that is right by measurement, the master's solution to the predictions cell.

It lives here, outside `viewcopy.notebook` and the package's top level, so the release offers no
one-call answer key; and grading would give a computed sheet nothing anyway (exercise.written).
"""

from __future__ import annotations

from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.next_ops import measure_pool
from viewcopy.exercise.production_model import copy_lines, forward_listing


def measured_predictions(rule: str = "") -> dict[int, tuple[str, str]]:
    """Predictions that are right by measurement (the master's solution, never typed by hand).

    Items that flip under a variant are predicted `sometimes: <condition>`; the rule is written
    from the evidence that decided the item.
    """
    table = measured_truth()
    out = {}
    for item, truth in table.items():
        evidence = truth.evidence[("x", "cpu")]
        why = rule or (
            f"{'shares' if evidence.same_storage else 'does not share'} x's storage; "
            f"strides {evidence.stride}, {evidence.bytes_allocated} bytes allocated"
        )
        verdict = f"sometimes: {truth.flips[0]}" if truth.flips else truth.reference
        out[item] = (verdict, why)
    return out


def measured_next_predictions(next_ops: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The master's NEXT_PREDICTIONS: each of the hand-in's next ops as measured, with the rule
    written from the evidence that decided it."""
    measured = measure_pool()
    out = {}
    for op_id in next_ops:
        evidence = measured[op_id]
        if evidence.verdict == "error":
            why = f"the strides cannot express it: PyTorch refuses ({evidence.message[:60]})"
        else:
            shares = "shares" if evidence.same_storage else "does not share"
            why = f"{shares} the parent's storage; strides {evidence.stride}"
        out[op_id] = (evidence.verdict, why)
    return out


def measured_production() -> dict[int, str]:
    """The master's PRODUCTION: each line of the forward as the dispatcher shows it."""
    copying = copy_lines()
    return {n: "copy" if n in copying else "no copy" for n, _ in forward_listing()}
