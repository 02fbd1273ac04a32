"""What a person is shown carries no raw float: every measured figure in its unit (display.units).
These hold on any machine, however loaded: they check the format, never a timing."""

from __future__ import annotations

import re

RAW_FLOAT = re.compile(r"\d\.\d{5,}|\d[eE][+-]?\d|\b(?:nan|inf)\b", re.IGNORECASE)
"""A float as Python or pandas prints it: six decimals, an exponent, nan or inf."""
UNIT = r"(?:ns|µs|ms|s|B|KB|MB|GB|GB/s|%|×)(?![\w/])"
"""What follows a shown figure: a unit, or `×` after a count."""
BARE_NUMBER = re.compile(rf"(?<![\w.])\d+(?:\.\d+)?(?![\d.])(?! ?{UNIT})")
"""A number no unit follows (one inside a name, `conv2d`, is no number)."""
A_TIME = r"<?\d+(?:\.\d+)? (?:ns|µs|ms|s)"


def raw_floats(text: str) -> list[str]:
    """The raw floats in `text` (HTML tags and their attributes left out)."""
    return RAW_FLOAT.findall(re.sub(r"<[^>]*>", " ", text))


def bare_numbers(text: str) -> list[str]:
    """The numbers in `text` that carry no unit."""
    return BARE_NUMBER.findall(text)
