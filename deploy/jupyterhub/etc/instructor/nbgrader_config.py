"""nbgrader for a grader's server: the course folder with its nbgrader_config.py, the exchange."""

import os

from nbgrader.auth import JupyterHubAuthPlugin

c = get_config()  # noqa: F821 (provided by nbgrader's config loader)
load_subconfig(os.path.join(os.environ["VIEWCOPY_COURSE_ROOT"], "nbgrader_config.py"))  # noqa: F821
c.Exchange.root = os.environ["VIEWCOPY_EXCHANGE"]
c.Exchange.path_includes_course = True
c.Authenticator.plugin_class = JupyterHubAuthPlugin
# Graders share the course and the exchange as the staff group (nbgrader's own switch).
c.CourseDirectory.groupshared = True
