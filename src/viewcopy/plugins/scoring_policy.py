"""The course's policy for crediting the twenty, from nbgrader_config.py to the graded kernel and
the grader's own verdict alike: `c.PredictionScoring.policy = "card"` (the lab card's line, 16/20
right) or `"balanced"` (80% of the views and of the copies right; see viewcopy.exercise.scoring).
The setting is declared once, with the course's other settings (viewcopy.course.settings).
"""

from __future__ import annotations

import os

from viewcopy.course import settings
from viewcopy.exercise.scoring import POLICY_VARIABLE
from viewcopy.plugins.base import CoursePreprocessor


class PredictionScoring(CoursePreprocessor, settings.PredictionScoring):
    """Autograde, before Execute: hand the policy (`policy`, the course's setting) to the kernel
    (and this process) through VIEWCOPY_SCORING, which the checks read."""

    def preprocess(self, nb, resources):
        os.environ[POLICY_VARIABLE] = self.policy
        return nb, resources
