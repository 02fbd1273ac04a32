"""nbgrader plug-ins: the grader's own verdict, restored cells, feedback, the output cap, the lock a
notebook carries, the student's own measurements kept, the scoring policy, answer lines,
sanitizing, hand grades kept through a regrade, and the sandboxed kernel.

This package is the one path a course's `nbgrader_config.py` names
(`from viewcopy.plugins import TrustedCredit, ...`). Each plug-in is imported from its module the
first time it is named, so importing one module here (the sandbox, say) loads none of the others.
The modules' own paths (`viewcopy.plugins.trusted.TrustedCredit`) keep working.
"""

from __future__ import annotations

from viewcopy.engine.version import lazy_names

HOMES = {
    "CapOutputs": "output_cap",
    "HideHiddenTests": "feedback",
    "KeepHandGrades": "hand_grades",
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
__getattr__, __dir__ = lazy_names(
    __name__, {name: f"{__name__}.{module}" for name, module in HOMES.items()}, globals()
)
