"""Debian's Chromium as the browser tests launch it, and skipping (or failing, where CI requires
it) when it or Playwright is missing. Imports no Playwright: the checks run before its import."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright's own download is not used
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def unavailable(reason: str, required_by: str) -> None:
    """Skip the calling module; fail it instead where the environment variable `required_by`
    is 1 (CI)."""
    if os.environ.get(required_by) == "1":
        pytest.fail(f"{reason}, and {required_by}=1 requires this test", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require_chromium(required_by: str) -> None:
    """Playwright and Debian's Chromium, or skip (fail where `required_by` is 1)."""
    if importlib.util.find_spec("playwright") is None:
        unavailable("playwright is not installed (pip install playwright)", required_by)
    if not CHROMIUM.exists():
        unavailable(f"no {CHROMIUM} (apt-get install chromium)", required_by)
