"""The two calls the notebook's read-only cells make: lock the predictions, then reveal."""

from __future__ import annotations

from viewcopy.devices import available_devices
from viewcopy.grading import truth_table
from viewcopy.locking import lock_predictions, verify_for_reveal
from viewcopy.measure import measure_catalogue
from viewcopy.spreadsheet import Spreadsheet


def lock(predictions: object, *, directory=None) -> Spreadsheet:
    """Validate PREDICTIONS, lock them beside the notebook, show them with the actual column hidden.

    Raises PredictionError (naming every bad item, writing nothing) or LockError.
    """
    parsed, state = lock_predictions(predictions, directory)
    return Spreadsheet(parsed, state)


def reveal(predictions: object, *, directory=None, devices: tuple[str, ...] | None = None):
    """Measure the twenty on every device and variant, and fill the spreadsheet with the truth.

    Refuses (LockError) unless PREDICTIONS are exactly what was locked.
    """
    parsed, state = verify_for_reveal(predictions, directory)
    truth = truth_table(measure_catalogue(devices or available_devices()))
    return Spreadsheet(parsed, state, truth)
