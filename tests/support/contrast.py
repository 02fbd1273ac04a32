"""WCAG 2.1's contrast ratio, computed from two colours as the success criteria define it (1.4.3
text, 1.4.11 graphics). No viewcopy logic here."""

from __future__ import annotations

from matplotlib.colors import to_rgb


def luminance(colour: str) -> float:
    """Relative luminance of a CSS or matplotlib colour (`#777`, `#1b1b1b`, `white`)."""
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """The contrast ratio of two colours, from 1 to 21."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
