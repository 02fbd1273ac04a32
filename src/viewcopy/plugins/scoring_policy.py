"""The course's policy for crediting the twenty, from nbgrader_config.py to the graded kernel and
the grader's own verdict alike: `c.PredictionScoring.policy = "card"` (the lab card's line, 16/20
right) or `"balanced"` (80% of the views and of the copies right; see viewcopy.exercise.scoring).
"""

from __future__ import annotations

import os

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Enum

from viewcopy.exercise.scoring import CARD, POLICIES, POLICY_VARIABLE


class PredictionScoring(NbGraderPreprocessor):
    """Autograde, before Execute: hand the policy to the kernel (and this process) through
    VIEWCOPY_SCORING, which the checks read."""

    policy = Enum(list(POLICIES), default_value=CARD, help="how the twenty are credited").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        os.environ[POLICY_VARIABLE] = self.policy
        return nb, resources
