"""What the instructor's master notebook and the tests use, never the students' API: the sheet
of predictions that is right by measurement, the master's solution to the predictions cell.

It lives here, outside `viewcopy.notebook` and the package's top level, so the release offers no
one-call answer key; and grading would give a computed sheet nothing anyway (exercise.written).
"""

from __future__ import annotations

from viewcopy.exercise.measured import measured_truth


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
