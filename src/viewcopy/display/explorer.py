"""The diagram explorer: choose an item, a device and a parent, or type any expression on `x`.

Core ipywidgets only (they work in Colab). Every control is labelled (its `description` renders a
<label>), Tab reaches them in order with a visible focus outline, and each redraw is announced in
words through a polite live region. Where widgets are not live (nbgrader's feedback HTML, GitHub),
the explorer's output still carries the current diagram as static HTML.
"""

from __future__ import annotations

from html import escape

import ipywidgets as widgets

from viewcopy.display.diagram import Diagram
from viewcopy.engine.devices import available_devices
from viewcopy.engine.evidence import Evidence
from viewcopy.engine.expressions import ExpressionError
from viewcopy.engine.measure import measure
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_item
from viewcopy.locking.gate import TruthFirst, truth_shown

CLASS = "viewcopy-explorer"
FOCUS_STYLE = f"""<style>
.{CLASS} select:focus-visible, .{CLASS} input:focus-visible {{
  outline: 2px solid currentColor !important;
  outline-offset: 0;
}}
</style>"""
"""ipywidgets draws its controls with `outline: none !important` and marks focus by a 1-px border's
colour alone; this outline, in the control's own text colour, is visible in every theme (offset 0:
the boxes around the controls clip anything further out)."""
KEYS = (
    "Keys: Tab moves between the controls; Space opens a list, the arrow keys choose in it and"
    " Enter picks; Enter in the expression box draws it."
)
"""How to drive the explorer from the keyboard. JupyterLab takes the arrow keys of a closed list to
move between cells (jupyter-widgets/ipywidgets#3912): an open list keeps them."""
ERROR_STYLE = "color:var(--jp-error-color1, #b71c1c)"
"""JupyterLab's error red, 4.5:1 or more on its light and dark backgrounds; elsewhere a dark red."""
VISUALLY_HIDDEN = (
    "position:absolute;width:1px;height:1px;margin:-1px;padding:0;border:0;"
    "overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap"
)


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


def announcement(diagram: Diagram) -> str:
    """What a redraw says: which diagram it is and its verdict, then its text alternative."""
    e = diagram.evidence
    title = e.op if e.item is None else f"item {e.item}, {e.op}"
    head = f"Diagram of {title} on parent {e.parent} ({e.device}): {e.verdict.upper()}."
    return f"{head} {diagram.description}"


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
        self.said = widgets.HTML()
        self.picture = widgets.HTML()
        focus = widgets.HTML(FOCUS_STYLE, layout=widgets.Layout(display="none"))
        controls = widgets.HBox([self.item, self.device, self.parent])
        keys = widgets.HTML(escape(KEYS))
        super().__init__(
            [
                focus,
                keys,
                controls,
                self.about,
                self.expression,
                self.status,
                self.said,
                self.picture,
            ]
        )
        self.add_class(CLASS)
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
            said, kept = _one_line(exc), " (the diagram below is the last one drawn)"
            self.status.value = f'<span style="{ERROR_STYLE}">{escape(said)}</span>{kept}'
            self.announce(said + kept)
            return
        note = f" · typed expression shown; clear it to see item {self.item.value}" if typed else ""
        self.status.value = escape(status_line(evidence) + note)
        diagram = Diagram(evidence)
        self.picture.value = diagram.html()
        self.announce(announcement(diagram))

    def announce(self, text: str) -> None:
        """Say `text` through the polite live region (visually hidden: the diagram shows it)."""
        self.said.value = (
            f'<p role="status" aria-live="polite" aria-atomic="true"'
            f' style="{VISUALLY_HIDDEN}">{escape(text)}</p>'
        )

    def static_fallback(self) -> str:
        """The status line and the diagram as plain HTML, for wherever widgets are not live."""
        return f"<div>{self.status.value}</div>{self.picture.value}"

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, object]:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self.static_fallback()
        return bundle


def explorer(devices: tuple[str, ...] | None = None) -> Explorer | TruthFirst:
    """The explorer (an ipywidgets VBox), on `devices` or on every available device; before the
    twenty are locked and revealed, only the sentence that says so (it draws verdicts)."""
    return Explorer(devices) if truth_shown() else TruthFirst()
