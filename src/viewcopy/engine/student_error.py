"""An error whose message is the whole story, for a student to read in a notebook."""

from __future__ import annotations


class StudentError(ValueError):
    """An error whose message is the whole story: notebooks show it without a traceback."""

    def _render_traceback_(self) -> list[str]:
        """IPython's hook: the message alone, not frames inside viewcopy."""
        return f"{type(self).__name__}: {self}".splitlines()
