"""The sandbox a graded kernel runs in: operating-system isolation, knowing nothing of the lab.

Its contract, what the layers above use (all importable from here, none loading torch or
jupyter_client):

- `Limits`: what one kernel may use; `describe(limits)`: the line that says what isolates a
  kernel on this machine, as whom, and which limits hold and which do not; `bwrap_problem()`:
  why kernels cannot be sandboxed here, or None; `readable_paths(protected)`: what a kernel may
  read, never the course's data it is given; `Cgroups.sweep()`, `kernel_connection.sweep()`:
  remove what killed runs left (cgroups, links to sockets).
- `kernel_manager.SandboxedKernelManager` (jupyter_client's kernel manager, loaded by name):
  every kernel it starts runs in a sandbox of its own, reached over sockets inside it; the
  sandbox is its kernels' provisioner (`provisioner`), so it keeps jupyter_client's contract
  (docs/security.md lists the one part it cannot: TCP).
- `warm_kernels`: a grading worker's kernel template (`start`, `stop`, `how_kernels_start`,
  `counts`), from which kernels are forked into their sandboxes.

Inside: the bubblewrap command (`bubblewrap`), who the kernel is on the host (`users`), rlimits
and environment (`limits`), cgroups (`cgroups`), joining a sandbox and dropping privileges
(`namespaces`), the template process (`kernel_template`), the links to a sandbox's sockets
(`kernel_connection`). docs/security.md states the threat model.
"""

from viewcopy.sandbox.bubblewrap import bwrap_problem, describe, readable_paths
from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.limits import THREADS, Limits

__all__ = ["THREADS", "Cgroups", "Limits", "bwrap_problem", "describe", "readable_paths"]
