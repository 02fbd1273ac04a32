"""The course on a JupyterHub on one machine: its state folder, and the hub in the foreground."""
