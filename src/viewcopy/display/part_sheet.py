"""What every predicted part's sheet shares: a headline over its table (the measured columns once
the part is revealed), shown as HTML that carries the lock's record, or as text."""

from __future__ import annotations

import html
from typing import ClassVar

from viewcopy.display.table import sheet_table
from viewcopy.locking.record import OUTPUT_KEY


class PartSheet:
    """A sheet's display. A sheet (a frozen dataclass declared with `repr=False`, so that this
    `__repr__` stands) has `lock`, `frame`, `revealed` and `headline()`; `below()` is HTML shown
    after the table (the diagrams of the misses, say); `table_name` names its table for a screen
    reader."""

    table_name: ClassVar[str] = "predictions and what was measured"

    def below(self) -> str:
        return ""

    def _repr_html_(self) -> str:
        table = sheet_table(self.frame, self.revealed, self.table_name)
        return f"<p><b>{html.escape(self.headline())}</b></p>{table}{self.below()}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        """HTML and text, with the lock record in the output's metadata: a notebook handed in
        without its lock file still carries its lock (the grader reads it from there)."""
        data = {"text/html": self._repr_html_(), "text/plain": repr(self)}
        record = self.lock.record
        return data, ({OUTPUT_KEY: record.json()} if record else {})

    def __repr__(self) -> str:
        return f"{self.headline()}\n{self.frame.to_string()}"
