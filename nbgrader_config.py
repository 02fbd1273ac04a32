"""nbgrader configuration for the course directory: this folder, wherever it is cloned."""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    Execute,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
)

from viewcopy.plugins import (  # the one path a course config names
    CapOutputs,
    HideHiddenTests,
    KeepHandedInLock,
    KeepHandGrades,
    KeepStudentMeasurements,
    PartsWithScores,
    PlaceHandedInLock,
    PredictionScoring,
    RestoreMissingCells,
    SanitizeForInstructor,
    StaticWidgets,
    TrustedCredit,
    WrapAnswerLines,
    WritePoints,
    templates,
)

c = get_config()  # noqa: F821 (provided by nbgrader's config loader)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "view_or_copy"

# A graded cell's points are its nbgrader metadata, written once: generate_assignment writes them
# into the check call that shows them (`points=`) and, where they differ from the shipped master's,
# into the opening table's call (viewcopy/plugins/points.py), before nbgrader's own steps.
c.GenerateAssignment.preprocessors = [
    WritePoints,
    *GenerateAssignment.class_traits()["preprocessors"].default(),
]

# How long one cell may run (nbgrader interrupts it past that: it scores nothing). Unset, `viewcopy
# grade` derives it from the master's own graded run: 20 times its slowest cell, at least 60 s, plus
# 120 s for a cold CUDA start on a grader with CUDA (viewcopy/grading/limits.py; the first line it
# prints says the figure). To override it, set it here, e.g. `c.Execute.timeout = 300` (the key is
# Execute.timeout; ExecutePreprocessor's is ignored), or pass `viewcopy grade --cell-limit SECONDS`.

# A student who deletes a test cell gets it back, and is graded on it. nbgrader 0.9's own
# OverwriteCells fails the whole submission on a deleted test cell here or on any duplicated cell
# (see viewcopy/restore.py), so autograde sanitizes with RestoreMissingCells in its place.
c.OverwriteCells.add_missing_cells = True
# A hand-in without its lock file (a notebook downloaded from Colab) keeps the lock its lock and
# reveal cells carry in their outputs (viewcopy/plugins/handed_in_lock.py). Answers graded by hand
# get no line over 100 characters (formgrader shows sources unwrapped); their values stay the same
# to the byte (viewcopy/plugins/answer_lines.py).
c.Autograde.sanitize_preprocessors = [
    KeepHandedInLock,
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    RestoreMissingCells,
    WrapAnswerLines,
    CheckCellMetadata,
]

# After the notebook runs, the grader recomputes every check cell's credit in its own process from
# the inputs the cell recorded, against truth it measures itself (viewcopy/trusted.py): a notebook
# that patches torch, print, the display or viewcopy changes nothing. Outputs past 2 MB are cut.
# The scores are saved as nbgrader's SaveAutoGrades saves them, except that a written answer graded
# by hand keeps its grade through a regrade while its text is unchanged (viewcopy/plugins/
# hand_grades.py). Once saved, what formgrader will show is sanitized (viewcopy/plugins/
# sanitize.py): no script, event handler or remote resource a hand-in holds runs in the
# instructor's browser.
c.Autograde.autograde_preprocessors = [
    PlaceHandedInLock,
    PredictionScoring,
    KeepStudentMeasurements,
    Execute,
    CapOutputs,
    TrustedCredit,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    KeepHandGrades,
    AssignLatePenalties,
    SanitizeForInstructor,
    CheckCellMetadata,
]

# The cells that measure for the student and carry no points (the explorer, what a copy costs, the
# production profile) keep the student's own outputs, measured on the student's machine, instead of
# running again (viewcopy/plugins/student_measurements.py); every graded cell is recomputed.
# False measures them again on the grader.
c.KeepStudentMeasurements.enabled = True

# Once the notebook has run, its kernel is killed rather than asked to shut down (0.6-0.7 s saved
# per hand-in): every output is in the graded notebook by then, and nothing of the kernel is kept.
c.Execute.shutdown_kernel = "immediate"

# Each grading worker keeps a warm kernel template (ipykernel, torch and the lab imported once) and
# forks every hand-in's kernel from it into that hand-in's own sandbox, instead of starting Python
# and importing torch for each (viewcopy/plugins/warm_kernels.py). False starts every kernel fresh.
c.WarmKernels.enabled = True

# How the twenty are credited: "card" (the lab card's line: full credit from 16/20 right; 16 of the
# twenty are views on x, so answering "view" to all reaches it) or "balanced" (full credit from 80%
# of the views and 80% of the copies right: a constant sheet scores 0.5). Graded kernels and the
# grader's own verdict both apply it (viewcopy/plugins/scoring_policy.py); feedback says which.
c.PredictionScoring.policy = os.environ.get("VIEWCOPY_SCORING", "card")

# The course's lock service (`viewcopy lock-service --data DIR`), if it runs one: the grader and the
# class report read its records and key from DIR (viewcopy/locking/judge.py). Empty: locks are
# the notebook's own files. A lock the service never recorded earns credit, flagged, unless False.
c.LockService.data_dir = os.environ.get("VIEWCOPY_LOCK_DATA", "")
c.LockService.unverified_locks_earn_credit = True

# Solution regions become a comment: PREDICTIONS keeps its placeholders, classify its docstring.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}

# Feedback: the opening table of graded parts shows the student's score in each; hidden tests (and
# tracebacks quoting them) never reach students; the explorer widget
# shows its static diagram (feedback pages have no live widgets); what the page renders is
# sanitized again (a notebook autograded before the sanitizer was configured is cleaned here).
c.GenerateFeedback.preprocessors = [
    GetGrades,
    PartsWithScores,
    HideHiddenTests,
    StaticWidgets,
    SanitizeForInstructor,
    CSSHTMLHeaderPreprocessor,
]

# The pages, drawn by the module's own templates (viewcopy/plugins/templates/) to meet WCAG 2.1 AA:
# the feedback page whole (language, title, landmarks, underlined links, contrast, wrapped text
# outputs, code that scrolls reachable by keyboard); in formgrader, the lab's text outputs wrapped
# (formgrader's own page is nbgrader's). A config that names neither keeps nbgrader's templates.
c.HTMLExporter.extra_template_basedirs = templates.BASEDIRS
c.HTMLExporter.extra_template_paths = [templates.NBGRADER]
c.HTMLExporter.template_name = templates.FORMGRADE
c.GenerateFeedback.HTMLExporter.template_name = templates.FEEDBACK

# No IgnorePattern: graded cells are silent on stderr by design (viewcopy.engine.quiet), so any
# stderr in a test cell is the student's and costs that cell, as nbgrader intends.
