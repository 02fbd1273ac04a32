"""What `nbgrader autograde` writes to the gradebook for one hand-in, written from its autograded
notebooks: the hand-in was graded elsewhere (a cluster worker), in a gradebook of its own.

The steps and their order are nbgrader's (`Autograde.init_assignment`, then the course's
gradebook-writing autograde steps over each notebook): the student, the submission with its
timestamp, zero for a notebook missing from the hand-in, then `SaveAutoGrades` and
`AssignLatePenalties` (or the course's subclasses of them) over each autograded notebook, against
this gradebook, so manual grades already given and the course's late policy count as in a local run.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from nbformat import NotebookNode

from viewcopy.course.settings import course_settings


def gradebook_steps(config) -> list[type]:
    """The course's autograde steps that write the gradebook, in the course's order."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import AssignLatePenalties, SaveAutoGrades

    configured = config.get("Autograde", {}).get("autograde_preprocessors")
    steps = configured or Autograde.class_traits()["autograde_preprocessors"].default()
    return [
        s
        for s in steps
        if isinstance(s, type) and issubclass(s, SaveAutoGrades | AssignLatePenalties)
    ]


def record_autograde(
    url: str,
    config,
    assignment: str,
    student_id: str,
    timestamp: str | None,
    handed_in: set[str],
    graded: Mapping[str, NotebookNode],
) -> None:
    """Write one hand-in's autograde into the gradebook at `url`.

    `timestamp` is the hand-in's timestamp.txt (None without one), `handed_in` the names of the
    notebooks it holds, `graded` the autograded notebooks by name (empty when grading failed:
    then only what nbgrader writes before it runs a notebook is written).
    """
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc
    from sqlalchemy.exc import SAWarning

    course_id = course_settings(config).course_id
    with warnings.catch_warnings(), Gradebook(url, course_id) as gradebook:
        # nbgrader's add_submission trips an SQLAlchemy autoflush warning it has always had
        warnings.simplefilter("ignore", SAWarning)
        gradebook.update_or_create_student(student_id)
        gradebook.find_assignment(assignment)
        if timestamp:
            try:
                parse_utc(timestamp)
            except ValueError:
                return  # nbgrader stops here too ("Invalid timestamp string")
            gradebook.update_or_create_submission(assignment, student_id, timestamp=timestamp)
        else:
            gradebook.update_or_create_submission(assignment, student_id)
        notebooks = gradebook.find_assignment(assignment).notebooks
        if handed_in & {nb.name for nb in notebooks}:
            for notebook in notebooks:
                if notebook.name in handed_in:
                    continue
                submitted = gradebook.find_submission_notebook(
                    notebook.name, assignment, student_id
                )
                for grade in submitted.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
                gradebook.db.commit()
    for name, notebook in graded.items():
        resources = {
            "nbgrader": {
                "notebook": name,
                "assignment": assignment,
                "student": student_id,
                "db_url": url,
            }
        }
        for step in gradebook_steps(config):
            notebook, resources = step(config=config)(notebook, resources)
