"""Side-by-side costs of the lab's work, printed as ratios measured in one run.

1. The reveal as a student meets it, cold: in a fresh process that has imported torch and viewcopy
   (the notebook's setup cell) and locked, the first `viewcopy.reveal` measures the twenty on `x`
   and every variant on every device, with the profiler's first use, and builds the spreadsheet.
   Against a fresh `import torch`; each side is the median of several fresh processes.
2. Drawing a 1-byte tensor expanded to 4 GiB against drawing the 24-element `x` (target: within
   2x, memory flat).
3. Probing that expanded tensor against probing `x`.

Run: .venv/bin/python benchmarks/bench_lab.py [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from viewcopy.display.diagram import Diagram
from viewcopy.engine.devices import available_devices
from viewcopy.engine.measure import measure
from viewcopy.exercise.catalogue import PARENT_EXPR

HUGE_PARENT = "torch.zeros(1, dtype=torch.uint8)"
HUGE_OP = "x.expand(2**32)"


def median_seconds(work: Callable[[], object], repeat: int) -> float:
    """Median wall time of `repeat` calls, after one warm-up call."""
    work()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_bytes(work: Callable[[], object]) -> int:
    """Peak Python-heap bytes allocated by one call (tracemalloc)."""
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


COLD_REVEAL = """
import sys, tempfile, time
from pathlib import Path
import viewcopy
with tempfile.TemporaryDirectory() as folder:
    predictions = {i: ("view", "slicing keeps the storage") for i in range(1, 21)}
    viewcopy.lock(predictions, directory=folder)
    started = time.perf_counter()
    viewcopy.reveal(predictions, directory=folder)
    Path(sys.argv[1]).write_text(repr(time.perf_counter() - started))
"""
"""The child writes its seconds to the file named by its argument: the lab prints to stdout."""


def cold_reveal_once(result: Path) -> float:
    """The first reveal's seconds in one fresh process; its own output is discarded."""
    command = [sys.executable, "-c", COLD_REVEAL, str(result)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return float(result.read_text())


def cold_reveal_seconds(repeat: int) -> float:
    """Median time of the first reveal in `repeat` fresh processes (the set-up is not timed)."""
    with tempfile.TemporaryDirectory() as folder:
        result = Path(folder) / "seconds"
        return statistics.median(cold_reveal_once(result) for _ in range(repeat))


def import_torch_seconds(repeat: int) -> float:
    """Median time for a fresh interpreter to import torch."""
    command = [sys.executable, "-c", "import torch"]
    return median_seconds(lambda: subprocess.run(command, check=True), repeat)


def row(name: str, mine: float, base: float, unit: str = "ms", target: str = "") -> str:
    scale = 1000 if unit == "ms" else 1 / 1024
    return (
        f"{name:<44} {mine * scale:>10.2f} {unit:<3} vs {base * scale:>10.2f} {unit:<3}"
        f"  ratio {mine / base:6.2f}x  {target}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the smallest run: --repeat 1")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    devices = available_devices()

    reveal = cold_reveal_seconds(repeat)
    torch_import = import_torch_seconds(repeat)

    small = measure("x.t()", PARENT_EXPR)
    huge = measure(HUGE_OP, HUGE_PARENT)
    draw_small = median_seconds(lambda: Diagram(small).svg, repeat * 4)
    draw_huge = median_seconds(lambda: Diagram(huge).svg, repeat * 4)
    memory_small = peak_bytes(lambda: Diagram(small).svg)
    memory_huge = peak_bytes(lambda: Diagram(huge).svg)
    probe_small = median_seconds(lambda: measure("x.t()", PARENT_EXPR), repeat * 4)
    probe_huge = median_seconds(lambda: measure(HUGE_OP, HUGE_PARENT), repeat * 4)

    print(f"devices: {', '.join(devices)}; median of {repeat}+ runs each\n")
    print(
        row(
            f"first reveal, cold ({len(devices)} device(s), x + variants)",
            reveal,
            torch_import,
            target="(against a fresh `import torch`)",
        )
    )
    print(
        row("draw 1 B expanded to 4 GiB, against x", draw_huge, draw_small, target="target <= 2x")
    )
    print(
        row(
            "  peak memory drawing it, against x",
            memory_huge,
            memory_small,
            unit="KiB",
            target="target: flat",
        )
    )
    print(row("probe 1 B expanded to 4 GiB, against x", probe_huge, probe_small))


if __name__ == "__main__":
    main()
