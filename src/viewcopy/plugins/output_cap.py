"""A cap on what one cell's output may weigh in the graded notebook and the feedback.

nbgrader's LimitOutput counts lines; a single 50 MB line passes it and lands in the autograded
notebook, the feedback HTML and every browser that opens them. This autograde preprocessor cuts
any stream or plain-text output past `max_bytes` and drops any richer output past it (HTML or an
image cannot be cut in half), saying what it did.
"""

from __future__ import annotations

from traitlets import Integer

from viewcopy.plugins.base import CoursePreprocessor


class CapOutputs(CoursePreprocessor):
    """Cut stream and plain text to `max_bytes`; drop richer outputs larger than that."""

    max_bytes = Integer(2_000_000, help="bytes kept per output field").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text = self._cut(output.text)
            data = output.get("data", {})
            for mime in list(data):
                if mime == "text/plain":
                    data[mime] = self._cut(data[mime])
                elif len(str(data[mime])) > self.max_bytes:
                    del data[mime]
                    data["text/plain"] = (
                        f"[a {mime} output larger than the cap, dropped by the grader]"
                    )
        return cell, resources

    def _cut(self, text: str) -> str:
        size = len(text.encode("utf-8", "replace"))
        if size <= self.max_bytes:
            return text
        kept = text.encode("utf-8", "replace")[: self.max_bytes].decode("utf-8", "ignore")
        return f"{kept}\n[... {size - self.max_bytes} more bytes cut by the grader]\n"
