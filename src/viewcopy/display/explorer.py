"""The diagram explorer: choose an item, a device and a parent, or type any expression on `x`.

Core ipywidgets only (they work in Colab). Where widgets are not live (nbgrader's feedback HTML,
GitHub), the explorer's output still carries the current diagram as static HTML.
"""

from __future__ import annotations

from html import escape

import ipywidgets as widgets

from viewcopy.display.draw import Diagram
from viewcopy.engine.devices import available_devices
from viewcopy.engine.evidence import Evidence
from viewcopy.engine.expressions import ExpressionError
from viewcopy.engine.measure import measure
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_item


def describe_parent(name: str) -> str:
    """One line saying what the parent called `name` is."""
    if name == "x":
        return f"x = {catalogue.PARENT_EXPR}: the lab's parent"
    variant = next(v for v in catalogue.VARIANTS if v.name == name)
    return f"{variant.name} (differs from x in {variant.condition}): {variant.description}"


def status_line(evidence: Evidence) -> str:
    """The verdict and the evidence behind it, on one line."""
    head = f"{evidence.verdict.upper()} · {evidence.op} on {evidence.parent} ({evidence.device})"
    if evidence.verdict == "error":
        return f"{head} · PyTorch: {evidence.message}"
    yes_no = {True: "yes", False: "no", None: "n/a"}
    allocated = "n/a" if evidence.bytes_allocated is None else f"{evidence.bytes_allocated} bytes"
    kernels = ", ".join(evidence.copy_kernels) or "none"
    return (
        f"{head} · same storage: {yes_no[evidence.same_storage]}"
        f" · write-through: {yes_no[evidence.write_through]}"
        f" · allocated: {allocated} · copy kernels: {kernels}"
    )


def _one_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    message = text[0] if text else ""
    return message if isinstance(exc, ExpressionError) else f"{type(exc).__name__}: {message}"


class Explorer(widgets.VBox):
    """The explorer's widgets, kept as attributes; displays as the widget plus a static copy."""

    def __init__(self, devices: tuple[str, ...] | None = None) -> None:
        self.item = widgets.Dropdown(
            options=[(f"{op.item}. {op.expr}", op.item) for op in catalogue.OPS],
            value=catalogue.OPS[0].item,
            description="item",
            layout=widgets.Layout(width="30em"),
        )
        self.device = widgets.Dropdown(
            options=list(devices or available_devices()), description="device"
        )
        self.parent = widgets.Dropdown(options=list(catalogue.PARENTS), description="parent")
        self.about = widgets.HTML()
        self.expression = widgets.Text(
            placeholder="any expression on x, e.g. x[::2, 1:] (Enter draws it; empty: the item)",
            description="expression",
            continuous_update=False,
            layout=widgets.Layout(width="80%"),
        )
        self.status = widgets.HTML()
        self.picture = widgets.HTML()
        controls = widgets.HBox([self.item, self.device, self.parent])
        super().__init__([controls, self.about, self.expression, self.status, self.picture])
        for control in (self.item, self.device, self.parent, self.expression):
            control.observe(self.redraw, names="value")
        self.redraw()

    def redraw(self, change: object = None) -> None:
        """Measure what is chosen (a typed expression wins over the item) and draw it."""
        self.about.value = escape(describe_parent(self.parent.value))
        typed = self.expression.value.strip()
        try:
            if typed:
                evidence = measure(
                    typed,
                    catalogue.parent_expr(self.parent.value),
                    self.device.value,
                    parent_name=self.parent.value,
                )
            else:
                evidence = measure_item(self.item.value, self.parent.value, self.device.value)
        except Exception as exc:  # a UI boundary: any refusal becomes one line, nothing is lost
            self.status.value = (
                f'<span style="color:#b71c1c">{escape(_one_line(exc))}</span>'
                " (the diagram below is the last one drawn)"
            )
            return
        note = f" · typed expression shown; clear it to see item {self.item.value}" if typed else ""
        self.status.value = escape(status_line(evidence) + note)
        self.picture.value = Diagram(evidence).html()

    def static_fallback(self) -> str:
        """The status line and the diagram as plain HTML, for wherever widgets are not live."""
        return f"<div>{self.status.value}</div>{self.picture.value}"

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, object]:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self.static_fallback()
        return bundle


def explorer(devices: tuple[str, ...] | None = None) -> Explorer:
    """The explorer (an ipywidgets VBox), on `devices` or on every available device."""
    return Explorer(devices)
