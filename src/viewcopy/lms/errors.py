"""What `viewcopy lms` cannot do, each in a sentence that says what to do (standard library
only: the command line imports it without the LMS's libraries)."""

from __future__ import annotations


class LmsError(Exception):
    """What `viewcopy lms` cannot do, in a sentence that says what to do."""


class LmsUnreachable(LmsError):
    """The LMS did not answer, or kept failing, after every retry."""


class LmsRefused(LmsError):
    """The LMS answered with a refusal (4xx): retrying would change nothing."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class ImportFileError(ValueError):
    """An export that cannot be merged: the message names the file, what is wrong and the fix."""
