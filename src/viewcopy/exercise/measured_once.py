"""What every graded kernel measures alike, measured once by a grading worker's kernel template:
the twenty on `x` and its variants, and the shipped pool of next ops (a course's own are measured
in each kernel), on the CPU (a template serves only graders without CUDA). The template names
this module (viewcopy.sandbox.kernel_template): a child of its own calls `measure` (the template
runs no torch op), and the template `keep`s what it returns, so each kernel forked from it reads
that evidence instead of measuring it again. Still measured, on this machine, with this torch,
once per worker; a student's own session measures as it always did. The worker itself measures
the same in its own process (`measure_here`) for the grader's checks."""

from __future__ import annotations

from viewcopy.engine import measure as engine
from viewcopy.engine.evidence import Evidence
from viewcopy.exercise.measured import measure_catalogue, measured_truth
from viewcopy.exercise.next_ops import measure_pool
from viewcopy.exercise.production_model import copy_lines, internal_copy_lines


def measure() -> dict[tuple, Evidence]:
    """The evidence, by the engine's arguments for it."""
    return engine.measured_once(lambda: (measure_catalogue(("cpu",)), measure_pool("cpu")))


def measure_here(devices: tuple[str, ...]) -> None:
    """What a grader's own checks measure alike for every hand-in (plugins.trusted: the twenty and
    the shipped pool on each of `devices`, the production model's copies on the CPU), measured in
    this process now, once: a grading worker does it while its kernel template starts, instead of
    in its first hand-in."""
    measured_truth(devices)
    for device in devices:
        measure_pool(device)
    copy_lines()
    internal_copy_lines()


def keep(measured: dict[tuple, Evidence]) -> None:
    """Every `engine.measure` of this process gives `measured` without measuring again."""
    engine.keep(measured)
