"""A request the lock service refuses: an HTTP status and one sentence saying why."""


class Refusal(Exception):
    """A request the service answers with an HTTP error status and one sentence."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status = status
        self.error = error
