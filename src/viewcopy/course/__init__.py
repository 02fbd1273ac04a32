"""The nbgrader course that holds the lab: its names and helpers, and reading hand-ins."""
