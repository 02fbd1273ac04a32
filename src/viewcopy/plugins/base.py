"""The base of the package's nbgrader plug-ins: nbgrader's preprocessor with nbconvert's
`display_data_priority` configurable again.

nbconvert's HTML exporter configures `NbConvertBase.display_data_priority` for every preprocessor
it runs (`nbgrader generate_feedback`), and nbgrader's `NbGraderPreprocessor` redeclares the trait
without `config=True`, so each plug-in logged "Config option `display_data_priority` not
recognized" at every run. nbgrader's own `GetGrades` declares it configurable; so does this base.
A step that reads the gradebook the run grades into opens it through `run_gradebook`.
"""

from __future__ import annotations

from nbconvert.utils.base import NbConvertBase
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List

from viewcopy.course.assignment import configured_course_id

DISPLAY_PRIORITY = NbConvertBase.class_traits()["display_data_priority"]


class CoursePreprocessor(NbGraderPreprocessor):
    """An nbgrader preprocessor that takes the exporter's display priority quietly."""

    display_data_priority = List(DISPLAY_PRIORITY.default(), help=DISPLAY_PRIORITY.help).tag(
        config=True
    )


def run_gradebook(info: dict, config):
    """nbgrader's Gradebook the run grades into (`info`: a step's `resources["nbgrader"]`),
    under the course's own id (its `config`), as every gradebook of the course is opened."""
    from nbgrader.api import Gradebook

    return Gradebook(info["db_url"], configured_course_id(config))
