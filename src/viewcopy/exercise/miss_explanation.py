"""Why a prediction missed, from what was measured: the layout algebra's sentence where it models
the op (where it lands in strides), then the measured one (`engine.reason`), on `x` and on the
parent the miss turns on: the variant of the condition a `sometimes` named, or the one that flips
the verdict. Nothing here is typed per op; every sentence is read off the evidence.
"""

from __future__ import annotations

from collections.abc import Mapping

from viewcopy.engine.evidence import Evidence
from viewcopy.engine.explain import explain
from viewcopy.engine.reason import Size, exact_bytes, measured_reason
from viewcopy.exercise import catalogue
from viewcopy.exercise.part import Prediction

ARTICLES = {"view": "a view", "copy": "a copy", "error": "an error"}


def explained(evidence: Evidence, size: Size = exact_bytes, *, algebra: bool = True) -> str:
    """The layout algebra's sentence where it models the op (unless `algebra` is false), then
    the measured one."""
    layout = evidence.parent_layout
    in_strides = explain(evidence.op, layout) if layout and algebra else None
    sentences = (s for s in (in_strides, measured_reason(evidence, size)) if s)
    return " ".join(f"{s.rstrip('.')}." for s in sentences)


def miss_explanation(
    said: Prediction | None,
    evidence: Mapping[tuple[str, str], Evidence],
    flips: tuple[str, ...],
    size: Size = exact_bytes,
) -> str:
    """Why one of the twenty is what it is, for a student who said `said` (None: in general).

    `evidence` is the item's, by (parent, device); `flips`, the conditions that flip it. First
    `x` on the CPU; then the parent of the condition a `sometimes` named, or else of the first
    condition that flips it, if any.
    """
    on_x = evidence[("x", "cpu")]
    sentences = [explained(on_x, size)]
    condition = said.condition if said else None
    named = condition or (flips[0] if flips else None)
    if named is not None:
        sentences.append(_changed(named, on_x, _variant(named, evidence, on_x.verdict), size))
    return " ".join(sentences)


def _variant(
    condition: str, evidence: Mapping[tuple[str, str], Evidence], verdict: str
) -> Evidence | None:
    """What the parent differing from `x` only in `condition` measured (for the device: `x` on
    another device, one whose verdict differs from `verdict` first); None if none was."""
    if condition == "device":
        others = [e for (p, d), e in evidence.items() if p == "x" and d != "cpu"]
        return min(others, key=lambda e: e.verdict == verdict, default=None)
    names = [v.name for v in catalogue.VARIANTS if v.condition == condition]
    return evidence.get((names[0], "cpu")) if names else None


def _changed(condition: str, on_x: Evidence, variant: Evidence | None, size: Size) -> str:
    """What changing only `condition` did, from that variant's evidence."""
    if variant is None:
        return (
            f"No parent differing from x only in its {condition} was measured here, so nothing "
            f"shows the {condition} flipping it."
        )
    flipped = variant.verdict != on_x.verdict
    effect = f"{'makes' if flipped else 'leaves'} it {ARTICLES[variant.verdict]}"
    where = f"{variant.parent} on {variant.device}"
    why = explained(variant, size, algebra=flipped)
    return f"Changing only the {condition} ({where}) {effect}: {why}"
