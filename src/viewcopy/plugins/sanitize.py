"""What the instructor sees is sanitized: a hand-in cannot script formgrader or the feedback page.

formgrader renders an autograded notebook's Markdown and HTML outputs as they are, in a page that
holds the instructor's Jupyter session; the feedback HTML does the same in the instructor's and the
student's browser. This preprocessor (in autograde after the scores are saved, and in feedback)
cleans every HTML and SVG output and every Markdown or raw cell through the allowlist of
viewcopy.display.safe_html, drops JavaScript and every other active output with a visible note,
keeps only output metadata that cannot become markup, and removes saved widget state. Display
only: nothing it touches is read for a score.
"""

from __future__ import annotations

import html

from viewcopy.course.check_record import KEY as RECORD_KEY
from viewcopy.display.safe_html import cleaned_if_changed, one_block, safe_markdown, sanitize_html
from viewcopy.locking.record import OUTPUT_KEY
from viewcopy.plugins.base import CoursePreprocessor
from viewcopy.plugins.feedback import WIDGET_VIEW

KEPT = {"text/plain", "image/png", "image/jpeg", "image/gif", "application/json"}
"""Shown escaped or as an image, never as markup."""
CLEANED = {"text/html", "image/svg+xml"}
IMAGES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
SIZES = ("width", "height")


def removed_note(mimetypes: list[str]) -> str:
    return (
        f"[{', '.join(mimetypes)} output removed by the grader: active content never runs where "
        "instructors read hand-ins]"
    )


def _text(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _size(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def safe_metadata(metadata: dict) -> dict:
    """The output metadata that cannot become markup: the lab's records, numeric image sizes."""
    kept = {key: metadata[key] for key in (RECORD_KEY, OUTPUT_KEY) if key in metadata}
    kept |= {key: metadata[key] for key in SIZES if _size(metadata.get(key))}
    for mime in IMAGES:
        if isinstance(size := metadata.get(mime), dict):
            numeric = {key: size[key] for key in SIZES if _size(size.get(key))}
            if numeric:
                kept[mime] = numeric
    return kept


def sanitize_output(output: dict) -> None:
    """Clean a display_data or execute_result output in place (streams and errors are text)."""
    if "data" not in output:
        return
    data, removed = output["data"], []
    for mime in list(data):
        if mime in CLEANED:
            data[mime] = sanitize_html(_text(data[mime]))
        elif mime == "text/markdown":
            if (safe := safe_markdown(_text(data[mime]))) is not None:
                data[mime] = safe
        elif mime not in KEPT:
            del data[mime]
            if mime != WIDGET_VIEW:  # no note: a widget is never live where this is read, and
                removed.append(mime)  # the explorer carries its diagram as HTML beside it
    if removed:  # said in HTML: text/plain stays as it was (nbgrader reads scores from it)
        shown = (
            data.get("text/html") or f"<pre>{html.escape(_text(data.get('text/plain', '')))}</pre>"
        )
        data["text/html"] = f"{shown}<p><small><i>{removed_note(removed)}</i></small></p>"
    output["metadata"] = safe_metadata(output.get("metadata", {}))


class SanitizeForInstructor(CoursePreprocessor):
    """Outputs, Markdown and raw cells cleaned for the instructor's browser; widget state gone."""

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            if (safe := safe_markdown(cell.source, cell.get("attachments"))) is not None:
                cell.source = safe
                cell.pop("attachments", None)
        elif cell.cell_type == "raw" and (cleaned := cleaned_if_changed(cell.source)) is not None:
            cell.source = one_block(cleaned)
        for output in cell.get("outputs", []):
            sanitize_output(output)
        return cell, resources


def unsanitized_views(config) -> str | None:
    """A warning when a course's config (nbgrader's Config) leaves formgrader or the feedback
    page unsanitized; None when both run SanitizeForInstructor."""
    steps = {
        "Autograde.autograde_preprocessors": config.get("Autograde", {}).get(
            "autograde_preprocessors", []
        ),
        "GenerateFeedback.preprocessors": config.get("GenerateFeedback", {}).get(
            "preprocessors", []
        ),
    }
    missing = [
        name
        for name, configured in steps.items()
        if not any(isinstance(s, type) and issubclass(s, SanitizeForInstructor) for s in configured)
    ]
    if not missing:
        return None
    steps_without = " and ".join(missing)
    return (
        f"warning: nbgrader_config.py does not sanitize what instructors see ({steps_without}"
        " without viewcopy.plugins.sanitize.SanitizeForInstructor): a hand-in's scripts would run "
        "in formgrader with your Jupyter session. Add it after AssignLatePenalties and before "
        "CSSHTMLHeaderPreprocessor, as this repository's nbgrader_config.py does."
    )
