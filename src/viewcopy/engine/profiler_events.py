"""The input dtypes of a profiled event, from what every supported torch's profiler records.

Newer profilers keep them on each event (`FunctionEvent.input_dtypes`); older ones (torch 2.4,
the floor) only in the profile's raw kineto events, whose correlation id is the event's id.
Which is there is asked of the profile, never of the version number.
"""

from __future__ import annotations

from collections.abc import Callable

DtypesOf = Callable[[object], "list[str] | None"]

UNAVAILABLE = (
    "viewcopy: this torch's profiler records no input dtypes, so copy bytes show as 0 "
    "(upgrade torch to see them)"
)
"""The one line said when neither record is there."""


def dtype_reader(prof) -> DtypesOf | None:
    """A function from an event of `prof` to its input dtypes, or None where the profile has
    neither record (then UNAVAILABLE says so)."""
    events = prof.function_events
    if any(hasattr(event, "input_dtypes") for event in events):
        return lambda event: getattr(event, "input_dtypes", None)
    raw = _kineto_dtypes(prof)
    if raw is None:
        return None
    return lambda event: raw.get((event.id, event.name, _shapes(event.input_shapes)))


def _kineto_dtypes(prof) -> dict[tuple, list[str]] | None:
    """{(correlation id, name, shapes): dtypes} from the raw kineto events, or None if absent."""
    results = getattr(prof, "kineto_results", None)
    events = getattr(results, "events", None)
    if events is None:
        return None
    found: dict[tuple, list[str]] = {}
    for raw in events():
        dtypes = getattr(raw, "dtypes", None)
        if dtypes is None:
            return None
        found[(raw.correlation_id(), raw.name(), _shapes(raw.shapes()))] = list(dtypes())
    return found


def _shapes(shapes) -> tuple:
    return tuple(tuple(shape) for shape in shapes)
