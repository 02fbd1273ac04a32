"""Where a script of your own copies: each line of it that ran a copy kernel, measured.

The script runs as `__main__` under torch's profiler with each of its lines a profiler range of
its own (engine.copy_trace), so every copy kernel the profile shows is charged to the line that
ran it, inside a function of the script too: what count, bytes and time mean is said there. A
copy kernel outside every line (autograd's own threads on CUDA) is left out.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

import torch

from viewcopy.engine.copy_trace import trace_copies
from viewcopy.engine.devices import DeviceUnavailable, available_devices
from viewcopy.engine.profiler_events import UNAVAILABLE
from viewcopy.engine.quiet import not_the_profilers

COPY_COLUMNS: tuple[str, ...] = ("line", "code", "kind", "kernels", "count", "bytes", "time_us")


class ScriptFailed(Exception):
    """The script is missing, is not Python, or raised; the message names the problem."""


@dataclass(frozen=True)
class CopyLine:
    """One line of the script and the copy kernels of one kind it ran: `layout` (the line asks
    for them) or `kernel-internal` (a compute op copies inside itself: copies nobody wrote).

    `bytes`: what the copies wrote (each destination's elements x item size); `time_us`: the
    outermost copy kernel's time with the kernels nested in it (engine.copy_trace).
    """

    line: int
    code: str
    kind: str
    kernels: tuple[str, ...]
    count: int
    bytes: int
    time_us: float

    def record(self) -> dict[str, object]:
        return {**asdict(self), "kernels": list(self.kernels), "time_us": round(self.time_us, 1)}


def copies_in(path: Path, device: str = "cpu") -> list[CopyLine]:
    """Run the script at `path` on `device` (torch's default); its lines that copied, in order."""
    _check_device(device)
    script = Path(path).resolve()
    lines = _source_lines(script)
    with _as_main(script, device):
        trace = trace_copies(lambda: _run(script), script, device)
    error, said = trace.value, trace.said
    for line in not_the_profilers(said):  # the script's own stderr, in order
        if line != UNAVAILABLE:
            print(line, file=sys.stderr)
    if error is not None:
        raise ScriptFailed(_failure(script, error))
    if UNAVAILABLE in said:
        print(UNAVAILABLE, file=sys.stderr)
    return [
        CopyLine(
            n,
            lines[n - 1].strip(),
            kind,
            tuple(row.kernels),
            row.count,
            row.bytes,
            row.seconds * 1e6,
        )  # fmt: skip
        for (n, kind), row in trace.copies.items()
    ]


def _source_lines(script: Path) -> list[str]:
    """The script's lines, once it is known to be a readable Python file."""
    try:
        source = script.read_bytes()
    except OSError as exc:
        raise ScriptFailed(f"{script}: cannot read it ({exc.strerror or exc})") from None
    try:
        compile(source, str(script), "exec")
    except SyntaxError as exc:
        raise ScriptFailed(f"{script} is not Python: {exc.msg} (line {exc.lineno})") from None
    except ValueError as exc:  # undecodable text, null bytes
        raise ScriptFailed(f"{script} is not Python: {exc}") from None
    return source.decode(errors="replace").splitlines()


def _check_device(device: str) -> None:
    if device not in available_devices():
        raise DeviceUnavailable(f"no {device.upper()} device here")


@contextmanager
def _as_main(script: Path, device: str) -> Iterator[None]:
    """`sys.argv`, `sys.path[0]` and torch's default device as `python SCRIPT` would have them."""
    saved_argv, saved_path, saved_device = sys.argv, list(sys.path), _default_device()
    sys.argv = [str(script)]
    sys.path.insert(0, str(script.parent))
    _set_default_device(device)
    try:
        yield
    finally:
        _set_default_device(saved_device.type if saved_device.type == "cpu" else saved_device)
        sys.argv, sys.path[:] = saved_argv, saved_path


def _default_device() -> torch.device:
    """torch's default device: where a new tensor lands (torch 2.4's `get_default_device()`
    raises once the default was set back to None)."""
    return torch.empty(0).device


def _set_default_device(device: str | torch.device) -> None:
    """torch's default device; CPU as no default at all (a CPU default costs every torch call)."""
    torch.set_default_device(None if device == "cpu" else device)


def _run(script: Path) -> BaseException | None:
    """Run the script as `__main__`; what it raised, or None (`sys.exit(0)` is success)."""
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        return None if exc.code in (None, 0) else exc
    except Exception as exc:
        return exc
    return None


def _failure(script: Path, error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"{script} exited with status {error.code}"
    line = _raising_line(str(script), error.__traceback__)
    where = "" if line is None else f" at line {line}"
    return f"{script} raised {type(error).__name__}{where}: {error}"


def _raising_line(script: str, tb: TracebackType | None) -> int | None:
    """The last line of `script` in the traceback: where the script raised or called what did."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == script:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
