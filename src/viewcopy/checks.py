"""The stable path of the graded cells' checks: every master notebook's test cells (and so every
gradebook) call `viewcopy.checks.<check>(...)`. The checks live in `viewcopy.notebook.checks`."""

from viewcopy.notebook.checks import *  # noqa: F403
from viewcopy.notebook.checks import __all__  # noqa: F401
