"""Which devices this machine can measure on: CPU always, CUDA and MPS when present.

The names and the error need no torch (the command line offers them before anything is measured);
asking the machine does, so each function imports it (where a torch built for the CPU alone could
not answer otherwise, `available_devices` knows without it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

KNOWN_DEVICES: tuple[str, ...] = ("cpu", "cuda", "mps")


class DeviceUnavailable(ValueError):
    """A device was asked for that this machine does not have."""


def available_devices() -> tuple[str, ...]:
    """The devices to measure on here, CPU first. Where torch is not imported yet and cannot find
    another device (`_accelerator_possible`), the CPU alone, without importing it: its import was
    1.5 s of CPU of `viewcopy grade`'s start, on a machine the workers' imports keep busy."""
    if "torch" not in sys.modules and not _accelerator_possible():
        return ("cpu",)
    import torch

    found = ["cpu"]
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return tuple(found)


def _accelerator_possible() -> bool:
    """Whether the installed torch could find a device beside the CPU: on a Mac (MPS), or where
    its build ships CUDA's (or ROCm's) libraries, or where that cannot be told."""
    if sys.platform == "darwin":
        return True
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return True
    libraries = Path(spec.origin).parent / "lib"
    if not libraries.is_dir():
        return True
    return any(libraries.glob("libtorch_cuda*")) or any(libraries.glob("libtorch_hip*"))


def resolve_devices(choice: str) -> tuple[str, ...]:
    """Turn `cpu`, `cuda`, `mps` or `all` into the devices to measure, refusing absent ones."""
    choice = choice.strip().lower()
    if choice == "all":
        return available_devices()
    if choice not in KNOWN_DEVICES:
        raise DeviceUnavailable(
            f"unknown device {choice!r}; choose one of {', '.join(KNOWN_DEVICES)} or all"
        )
    if choice not in available_devices():
        raise DeviceUnavailable(
            f"device {choice!r} is not available on this machine "
            f"(available: {', '.join(available_devices())})"
        )
    return (choice,)


def synchronize(device: str) -> None:
    """Wait for queued work on `device`, so that memory counters and reads are settled."""
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def allocated_bytes(device: str) -> int | None:
    """Bytes held by the device's allocator now; None for CPU, which has no such counter."""
    import torch

    if device == "cuda":
        return torch.cuda.memory_allocated()
    if device == "mps":
        return torch.mps.current_allocated_memory()
    return None
