"""Google Colab: the one thing the lab needs there is Colab's widget manager for ipywidgets 8."""

from __future__ import annotations

import sys


def in_colab() -> bool:
    """True in a Colab kernel (it imports `google.colab` before any cell runs)."""
    return "google.colab" in sys.modules


def enable_widgets() -> bool:
    """Enable Colab's custom widget manager, which ipywidgets 8 needs there; False elsewhere."""
    if not in_colab():
        return False
    from google.colab import output

    output.enable_custom_widget_manager()
    return True
