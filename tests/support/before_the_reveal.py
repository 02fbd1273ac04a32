"""Call every public name of the lab's notebook API in a fresh process, each in a fresh folder,
and print (as JSON) what each showed and whether any tensor op ran while it did.

Run as `python before_the_reveal.py SHEET STAGE`: SHEET `a` or `b` picks one of two sheets that
disagree on every answer; STAGE `before` calls each name before anything is locked, `after` first
locks and reveals the twenty (measured right) in that folder. A fresh process, so no cache of an
earlier measurement can hide one; tensor ops are seen by a TorchFunctionMode, not by the lab.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import sys
import tempfile
import traceback

import IPython.display
import torch
from torch.overrides import TorchFunctionMode

import viewcopy
import viewcopy.checks
import viewcopy.explorer
from viewcopy import notebook as lab
from viewcopy.exercise.catalogue import ITEMS
from viewcopy.exercise.predictions import TWENTY
from viewcopy.exercise.production_model import forward_listing


class TensorOps(TorchFunctionMode):
    """Records every torch function or method called with a tensor among its arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if any(isinstance(a, torch.Tensor) for a in (*args, *kwargs.values())):
            self.seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **kwargs)


def sheets(which: str) -> dict[str, object]:
    """Sheet `a` says view (no copy) everywhere, `b` copy, each with a rule."""
    verdict, line = ("view", "no copy") if which == "a" else ("copy", "copy")
    return {
        "twenty": {item: (verdict, f"strides decide {verdict}") for item in ITEMS},
        "rules": {item: f"the strides decide it: {verdict}" for item in ITEMS},
        "classify": (lambda result, parent: verdict),
        "next": {f"N{n:02d}": (verdict, "strides") for n in range(1, 11)},
        "production": {n: line for n, _ in forward_listing()},
    }


def calls(sheet: dict[str, object]) -> dict[str, object]:
    """How to call each public name with `sheet`; every public name must be here."""
    twenty, rules, production = sheet["twenty"], sheet["rules"], sheet["production"]
    checks = viewcopy.checks
    return {
        "setup": lambda: lab.setup(),
        "parts": lambda: lab.parts(),
        "show_twenty": lambda: lab.show_twenty(),
        "debrief": lambda: lab.debrief(),
        "lock": lambda: lab.lock(twenty),
        "reveal": lambda: lab.reveal(twenty),
        "locked": lambda: lab.locked(TWENTY, twenty),
        "revealed": lambda: lab.revealed(TWENTY, twenty),
        "next_ops": lambda: lab.next_ops(),
        "lock_next": lambda: lab.lock_next(sheet["next"]),
        "reveal_next": lambda: lab.reveal_next(sheet["next"]),
        "what_did_you_pay": lambda: lab.what_did_you_pay(),
        "show_production": lambda: lab.show_production(),
        "lock_production": lambda: lab.lock_production(production),
        "profile_production": lambda: lab.profile_production(production),
        "course_lock_service": lambda: lab.course_lock_service(),
        "explorer": lambda: viewcopy.explorer.explorer(),
        "checks.prediction_credit": lambda: checks.prediction_credit(twenty, points=5),
        "checks.rules_after_credit": lambda: checks.rules_after_credit(twenty, rules, points=2),
        "checks.classify_credit": lambda: checks.classify_credit(
            sheet["classify"], checks.the_twenty(), points=3
        ),
        "checks.next_credit": lambda: checks.next_credit(sheet["next"], points=4),
        "checks.production_credit": lambda: checks.production_credit(production, points=2),
        "checks.specificity_credit": lambda: checks.specificity_credit(rules[1], item=21),
        "checks.the_twenty": lambda: checks.the_twenty(),
        "checks.on_devices": lambda: checks.on_devices([("h", "torch.arange(4.)", "x[1:]")]),
        "checks.Case": lambda: checks.Case("h", "torch.arange(4.)", "x[1:]"),
    }


def public_names() -> list[str]:
    """The notebook API: the lab module's functions, and the stable paths' `__all__`."""
    own = [
        name
        for name, value in inspect.getmembers(lab, inspect.isfunction)
        if value.__module__ == lab.__name__ and not name.startswith("_")
    ]
    top = [n for n in viewcopy.__all__ if callable(getattr(viewcopy, n)) and n != "checks"]
    return sorted(
        {
            *own,
            *(n for n in top if not isinstance(getattr(viewcopy, n), type)),
            *(f"checks.{n}" for n in viewcopy.checks.__all__),
            *viewcopy.explorer.__all__,
        }
    )


def shown_by(call) -> dict[str, object]:
    """What one call printed, displayed and returned (or raised), and the tensor ops it ran."""
    displayed: list[str] = []

    def display(*objects, **_):
        for o in objects:
            displayed.append(o._repr_html_() if hasattr(o, "_repr_html_") else repr(o))

    IPython.display.display = display
    out, mode = io.StringIO(), TensorOps()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), mode:
        try:
            value = call()
            returned = value._repr_html_() if hasattr(value, "_repr_html_") else repr(value)
        except Exception as exc:  # a refusal is an answer too: its type and message
            returned = f"raised {type(exc).__name__}: {exc}"
            if not isinstance(exc, viewcopy.LockError | viewcopy.PredictionError):
                returned += "\n" + traceback.format_exc()
    return {"out": out.getvalue(), "displayed": displayed, "returned": returned, "ops": mode.seen}


def main(which: str, stage: str) -> None:
    os.environ.pop("VIEWCOPY_LOCK_SERVICE", None)
    os.environ.pop("NBGRADER_EXECUTION", None)
    table = calls(sheets(which))
    found: dict[str, object] = {"missing": [n for n in public_names() if n not in table]}
    for name, call in table.items():
        with tempfile.TemporaryDirectory(prefix="before-the-reveal-") as folder:
            os.chdir(folder)
            if stage == "after":
                from viewcopy.instructor.master import measured_predictions

                right = measured_predictions()
                with contextlib.redirect_stdout(io.StringIO()):
                    lab.lock(right)
                    lab.reveal(right)
            found[name] = shown_by(call)
            os.chdir(os.path.dirname(folder))
    print(json.dumps(found))


if __name__ == "__main__":
    main(*sys.argv[1:3])
