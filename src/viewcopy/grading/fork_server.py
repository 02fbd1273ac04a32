"""Imported by the fork server that grading workers are forked from, and nowhere else (worker.
worker_context names it): every worker's imports done once, and the server's end without Python's
teardown.

The server runs no torch op and starts no thread, so a worker forked from it is as a spawned one
that has imported the same modules (3.7 s of CPU a worker, measured, and 0.4 s more on its first
hand-in for the checks). It ends when the grader does, even killed outright: its pipe to the grader
closes (each worker closes its own copy, worker.leave_the_fork_server). Tearing torch down took it
2 s and more under load, and its workers get their parent-death signal only once it has ended
(worker.die_with_parent), so it ends at once: nothing of a student's is ever in it.
"""

import atexit
import os

import nbconvert.preprocessors  # noqa: F401 (imported once, for every worker)
import nbgrader.apps  # noqa: F401
import nbgrader.converters  # noqa: F401
import nbgrader.preprocessors  # noqa: F401
import torch  # noqa: F401

import viewcopy.grading.worker  # noqa: F401
import viewcopy.notebook.context  # noqa: F401 (the checks the grader's own verdict runs)
import viewcopy.plugins  # noqa: F401

atexit.register(os._exit, 0)  # registered last, run first: before the teardown of the imports
