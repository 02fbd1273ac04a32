"""Feedback preprocessors for nbgrader: hidden tests never reach students, tracebacks included,
and widgets show their static copy.

nbgrader's feedback HTML keeps the autograded notebook's test cells whole (hidden tests restored)
and a failing cell's traceback quotes its source. `HideHiddenTests` removes the hidden region and
cuts every error in such a cell down to its one-line `Error: message`.
"""

from __future__ import annotations

from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class HideHiddenTests(ClearHiddenTests):
    """ClearHiddenTests, plus tracebacks of cells that held hidden tests reduced to one line."""

    def preprocess_cell(self, cell, resources, cell_index):
        had_hidden = self.begin_test_delimeter in cell.source
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if had_hidden and cell.cell_type == "code":
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


class StaticWidgets(NbGraderPreprocessor):
    """Keep the static HTML copy of a widget output: feedback pages have no live widgets.

    nbgrader's feedback HTML drops widget state, so a widget view renders as an empty placeholder
    (and its loader fails without jQuery); the explorer also carries its diagram as text/html.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "text/html" in data:
                del data[WIDGET_VIEW]
        return cell, resources
