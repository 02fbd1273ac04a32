"""The module's own templates for the pages nbgrader renders, each a folder here: the feedback page
a student opens (`FEEDBACK`) and formgrader's grading page with the lab's text outputs wrapped
(`FORMGRADE`, which extends nbgrader's own). A course's nbgrader_config.py names them:

    from viewcopy.plugins import templates
    c.HTMLExporter.extra_template_basedirs = templates.BASEDIRS
    c.HTMLExporter.extra_template_paths = [templates.NBGRADER]
    c.HTMLExporter.template_name = templates.FORMGRADE
    c.GenerateFeedback.HTMLExporter.template_name = templates.FEEDBACK

formgrader reads the course's config after its own, so its page takes `FORMGRADE`; feedback's
exporter is GenerateFeedback's child, so the last line names its template alone.
"""

from __future__ import annotations

from pathlib import Path

import nbgrader

FEEDBACK = "viewcopy_feedback"
FORMGRADE = "viewcopy_formgrade"
NBGRADER = str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates")
"""nbgrader's templates: `FORMGRADE` extends its formgrade/index.html.j2."""
BASEDIRS = [str(Path(__file__).parent), NBGRADER]
"""Where nbconvert finds these templates and the nbgrader templates they build on."""
