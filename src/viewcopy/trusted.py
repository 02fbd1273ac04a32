"""`viewcopy.trusted`: deprecated. The path a course's nbgrader_config.py named at 0.1.0; name
`viewcopy.plugins` instead (`from viewcopy.plugins import ...`). Each name imported from here is
the plug-in's own object and warns (DeprecationWarning); the path goes in viewcopy 1.0.0
(CHANGELOG.md, ARCHITECTURE.md's "Stable paths")."""

from viewcopy.engine.version import deprecated_path as _deprecated_path

__all__ = ["TrustedCredit"]  # noqa: F822 (served by __getattr__)
__getattr__, __dir__ = _deprecated_path(__name__, __all__)
