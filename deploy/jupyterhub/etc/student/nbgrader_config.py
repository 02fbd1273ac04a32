"""nbgrader for a student's server: the course's exchange, and the courses the hub's groups say."""

import os

from nbgrader.auth import JupyterHubAuthPlugin

c = get_config()  # noqa: F821 (provided by nbgrader's config loader)
c.Exchange.root = os.environ["VIEWCOPY_EXCHANGE"]
c.Exchange.path_includes_course = True
c.Authenticator.plugin_class = JupyterHubAuthPlugin
# nbgrader names a submission by the server's Unix user (`vc-<name>` here, `jovyan` in most
# images): name it by the hub user instead.
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
