"""The class report in a few lines for the terminal: what to look at before the next lecture."""

from __future__ import annotations

from collections.abc import Iterable

from viewcopy.exercise.scoring import CARD, PASS_MARK
from viewcopy.report.item_words import reliability, worth_a_look_line
from viewcopy.report.numbers import MEMORISED_BELOW, ClassReport


def terminal_summary(report: ClassReport) -> str:
    """A few lines for the terminal: what to look at before the next lecture."""
    lines = [*_class(report), _transfer(report), _production(report), _rules_after(report)]
    worst = sorted(report.misconceptions, key=lambda m: -m.wrong)[:5]
    lines.append(
        f"most mispredicted (of {report.judged}): "
        + _listed(f"{m.item} {m.expr} ({m.wrong})" for m in worst if m.wrong)
    )
    lines.append(f"{worth_a_look_line(report.items)}; {reliability(report.reliability)}")
    traps = [t for t in report.traps if t.wrong][:5]
    lines.append(
        "classify cases answered wrong most: "
        + _listed(f"{t.hint} [{t.device}] ({len(t.wrong)})" for t in traps)
    )
    lines.append(
        "specific answers: "
        + ", ".join(f"{q.item}: {q.specific}/{q.graded}" for q in report.specificity)
    )
    lines.append(alike_line(report))
    if report.problems:
        lines.append("to look at:")
        lines += [f"  {student}: {problem}" for student, problem in report.problems]
    return "\n".join(lines)


def alike_line(report: ClassReport) -> str:
    """The terminal's line on the hand-ins that look alike (report.similarity)."""
    if report.similar is None:
        return "hand-ins that look alike: not compared (no release/ to subtract the starter code)"
    pairs = [f"{p.first} and {p.second} ({p.score:.0%})" for p in report.similar]
    where = " (side by side in report.html: look before concluding anything)" if pairs else ""
    return f"hand-ins that look alike: {_listed(pairs)}{where}"


def _listed(parts: Iterable[str]) -> str:
    return "; ".join(parts) or "none"


def _class(report: ClassReport) -> list[str]:
    """Who handed in, who passes, the lock states, and the scores against the base rate."""
    handed = report.handed_in
    lines = [
        f"{report.assignment}: {len(report.students)} students, {len(handed)} handed in "
        f"(truth measured on {', '.join(report.devices)}, torch {report.torch})",
        f"predictions before looking: {sum(s.passes for s in handed)}/{len(handed)} pass "
        + (f"{PASS_MARK}/20" if report.scoring == CARD else "the balanced 80% line"),
        "lock: " + "; ".join(f"{k} {v}" for k, v in report.lock_counts.items() if v),
        "releases: "
        + "; ".join(
            f"{what} " + ", ".join(f"{release} {n}" for release, n in sorted(count.items()))
            for what, count in report.releases.items()
            if count
        ),
    ]
    read = [s for s in handed if s.balanced is not None]
    if read and report.base is not None:
        flagged = [f"{s.student} ({s.flag})" for s in read if s.flag]
        lines.append(
            f"mean right {sum(s.right for s in read) / len(read):.1f}/20, mean balanced "
            f"{sum(s.balanced for s in read) / len(read):.2f}; {report.base.sentence()}; "
            f"no better than that: {', '.join(flagged) or 'none'}"
        )
    return lines


def _transfer(report: ClassReport) -> str:
    memorised = [s.student for s in report.students if s.memorised]
    gaps = [f for f in report.transfer if f.gap is not None and f.gap > 0][:3]
    return (
        f"transfer to the next ops: memorised (twenty pass, next ops below "
        f"{MEMORISED_BELOW:.0%}): {', '.join(memorised) or 'none'}; transfers worst: "
        + _listed(f"{f.family} ({f.twenty_share:.0%} -> {f.next_share:.0%})" for f in gaps)
    )


def _production(report: ClassReport) -> str:
    free = sorted(report.thought_free, key=lambda row: -len(row.students))[:3]
    return "production lines that ask for a layout copy, thought free most: " + _listed(
        f"{r.line} {r.code} ({len(r.students)} students)" for r in free if r.students
    )


def _rules_after(report: ClassReport) -> str:
    never = [s.student for s in report.students if s.rules_never_held]
    held = _listed(
        f"{f} {r.with_rule}; {r.tested}; "
        + (f"{r.held_share:.0%}" if r.held_share is not None else "—")
        for f, r in report.rule_families.items()
    )
    return (
        "rules after, per family (missed items with a rule; tested on the next ops; held there): "
        f"{held}; rules that never held: {', '.join(never) or 'none'}"
    )
