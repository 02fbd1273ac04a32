"""A student's JupyterLab: the assignment list, not formgrader; no news prompt over the notebook."""

import os

c = get_config()  # noqa: F821 (provided by Jupyter's config loader)
c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.course_list": False,
}
c.LabApp.app_settings_dir = os.environ["VIEWCOPY_LAB_SETTINGS"]
# The terminal keeps the environment the hub gave this server (a login shell would reset PATH).
c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash"]}
