"""A grader's JupyterLab: formgrader opens in its panel (nbgrader issue 1870), no news prompt.

JupyterHub 4.1 and later forbid framing a user's server (`frame-ancestors 'none'`), so Lab's
formgrader panel is blank. This server, and only graders', allows frames from its own origin. On
a hub without subdomains that origin is every user's: a page a student serves could frame it and
act as the grader if the grader opened that page. A real course sets
`c.JupyterHub.enable_subdomains = True` (then 'self' is the grader's own subdomain), or drops this
setting and opens formgrader in its own tab at /user/<name>/formgrader.
"""

import os

c = get_config()  # noqa: F821 (provided by Jupyter's config loader)
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
c.LabApp.app_settings_dir = os.environ["VIEWCOPY_LAB_SETTINGS"]
# The terminal keeps the environment the hub gave this server (a login shell would reset PATH).
c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash"]}
