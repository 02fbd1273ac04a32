"""nbgrader plug-ins: the grader's own verdict, restored cells, feedback, the output cap, the lock a
notebook carries, the student's own measurements kept, the scoring policy, answer lines,
sanitizing, and the sandboxed kernel.

This package is the one path a course's `nbgrader_config.py` names
(`from viewcopy.plugins import TrustedCredit, ...`). Each plug-in is imported from its module the
first time it is named, so importing one module here (the sandbox, say) loads none of the others.
The modules' own paths (`viewcopy.plugins.trusted.TrustedCredit`) keep working.
"""

from __future__ import annotations

import importlib

HOMES = {
    "CapOutputs": "output_cap",
    "HideHiddenTests": "feedback",
    "KeepHandedInLock": "handed_in_lock",
    "KeepStudentMeasurements": "student_measurements",
    "PartsWithScores": "feedback",
    "PlaceHandedInLock": "handed_in_lock",
    "PredictionScoring": "scoring_policy",
    "RestoreMissingCells": "restore",
    "SandboxedExecute": "sandboxed_kernel",
    "SandboxedKernelManager": "sandboxed_kernel",
    "SanitizeForInstructor": "sanitize",
    "StaticWidgets": "feedback",
    "TrustedCredit": "trusted",
    "WrapAnswerLines": "answer_lines",
    "WritePoints": "points",
}
"""Each plug-in and the module of this package it lives in."""

__all__ = sorted(HOMES)


def __getattr__(name: str):
    if name not in HOMES:
        raise AttributeError(f"module 'viewcopy.plugins' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
