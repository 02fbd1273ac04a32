"""The base of the package's nbgrader plug-ins: nbgrader's preprocessor with nbconvert's
`display_data_priority` configurable again.

nbconvert's HTML exporter configures `NbConvertBase.display_data_priority` for every preprocessor
it runs (`nbgrader generate_feedback`), and nbgrader's `NbGraderPreprocessor` redeclares the trait
without `config=True`, so each plug-in logged "Config option `display_data_priority` not
recognized" at every run. nbgrader's own `GetGrades` declares it configurable; so does this base.
"""

from __future__ import annotations

from nbconvert.utils.base import NbConvertBase
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List

DISPLAY_PRIORITY = NbConvertBase.class_traits()["display_data_priority"]


class CoursePreprocessor(NbGraderPreprocessor):
    """An nbgrader preprocessor that takes the exporter's display priority quietly."""

    display_data_priority = List(DISPLAY_PRIORITY.default(), help=DISPLAY_PRIORITY.help).tag(
        config=True
    )
