# Copyright (c) Jupyter Development Team.
# Distributed under the terms of the Modified BSD License.

__all__ = ["__version__"]

from ._version import __version__
from .jupyter_core import *  # noqa: F403
