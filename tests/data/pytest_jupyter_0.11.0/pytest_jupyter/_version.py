"""Version info for pytest_jupyter."""
# Copyright (c) Jupyter Development Team.
# Distributed under the terms of the Modified BSD License.

__version__ = "0.11.0"
