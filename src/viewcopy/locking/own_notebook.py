"""The notebook this kernel runs, as its front end last had it: where a lock lost with the files
beside the notebook can still be found (the lock and reveal cells carry the record in their
outputs).

Three front ends tell a kernel its notebook: Colab hands over the notebook itself (its outputs
included) when asked; Jupyter Server (JupyterLab, Notebook 7, a JupyterHub) starts the kernel with
the notebook's path in `JPY_SESSION_NAME`; VS Code puts it in `__vsc_ipynb_file__`. Standard
library only: this runs in student kernels.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

COLAB_TIMEOUT_S = 30
"""How long Colab's front end may take to hand over a large notebook."""


@dataclass(frozen=True)
class OwnNotebook:
    """The kernel's notebook as JSON (`content`, None when it could not be read), where it came
    from (`source`, for the student), and why it could not be read (`problem`)."""

    content: dict | None
    source: str
    problem: str = ""


def own_notebook() -> OwnNotebook:
    """The notebook this kernel runs, from the first front end that can tell."""
    if "google.colab" in sys.modules:
        return _from_colab()
    path = os.environ.get("JPY_SESSION_NAME", "").strip() or _vscode_path()
    if path:
        return _from_file(Path(path))
    return OwnNotebook(
        None,
        "",
        "this kernel was not told which notebook it runs (JupyterLab, Jupyter Notebook 7, "
        "VS Code and Colab tell it)",
    )


def _from_colab() -> OwnNotebook:
    source = "Colab's copy of this notebook"
    try:
        from google.colab import _message

        answer = _message.blocking_request("get_ipynb", request="", timeout_sec=COLAB_TIMEOUT_S)
    except Exception as exc:  # Colab's private API: whatever it raises, the lab goes on
        return OwnNotebook(None, source, f"Colab did not hand it over ({exc})")
    content = answer.get("ipynb") if isinstance(answer, dict) else None
    if not isinstance(content, dict):
        return OwnNotebook(None, source, "Colab did not hand it over (no notebook in its answer)")
    return OwnNotebook(content, source)


def _from_file(path: Path) -> OwnNotebook:
    if not path.is_absolute() and not path.exists():  # a server's path, relative to its root
        path = Path.cwd() / path.name  # the kernel runs in the notebook's folder
    source = f"the notebook's saved file ({path})"
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return OwnNotebook(None, source, f"it could not be read ({exc})")
    if not isinstance(content, dict):
        return OwnNotebook(None, source, "it is not a notebook")
    return OwnNotebook(content, source)


def _vscode_path() -> str:
    """The notebook's path VS Code gives its kernel, "" elsewhere."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    ipython = get() if get else None
    value = ipython.user_ns.get("__vsc_ipynb_file__", "") if ipython is not None else ""
    return value if isinstance(value, str) else ""
