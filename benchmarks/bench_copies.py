"""`viewcopy copies` on a small script, measured side by side in one run and printed as ratios.

1. `copies_in(script)` (the script under the profiler, each of its lines a profiler range)
   against running the same script plainly with runpy: the price of looking.
2. The production model's forward traced line by line as `lab.profile_production` traces it
   (warm forwards, RUNS of them in one profiler session: the median run, the time its copies are a
   share of) against the plain forward: the profiler's overhead on the forward (target: at most
   3x). Beside it, the whole session per forward (starting and stopping the profiler and reading
   its events, which the forward does not pay but the cell does).
3. Each copying line's effective bandwidth (the bytes its copies wrote / their time, as the report
   gives them) against this machine's contiguous copy bandwidth measured in the same run: a plain
   `dst.copy_(src)` of a large contiguous float32 tensor, median of several.

Run: .venv/bin/python benchmarks/bench_copies.py [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import inspect
import runpy
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from viewcopy.engine.copies import copies_in
from viewcopy.engine.copy_trace import trace_copies
from viewcopy.exercise.production_model import RUNS, TinyVisionTransformer, build

SCRIPT = """\
import torch
x = torch.randn(1024, 1024)
idx = torch.randperm(1024)
t = x.t().contiguous()
half = x.to(torch.float16)
twin = x.clone()
both = torch.cat([x, x])
rows = x[idx]
out = torch.empty(1024, 512); out.copy_(x[:, ::2])
"""
REFERENCE_ELEMENTS = 2**25
"""128 MiB of float32: larger than the caches, so the reference copy runs at memory speed."""


def median_seconds(work: Callable[[], object], repeat: int) -> float:
    """Median wall time of `repeat` calls, after one warm-up call."""
    work()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def contiguous_copy_bandwidth(repeat: int) -> float:
    """Bytes read plus written per second by `dst.copy_(src)` on a large contiguous float32
    tensor (median), as the cost table's floor counts them."""
    src = torch.randn(REFERENCE_ELEMENTS)
    dst = torch.empty_like(src)
    seconds = median_seconds(lambda: dst.copy_(src), repeat)
    return 2 * dst.numel() * dst.element_size() / seconds


def row(name: str, mine: float, base: float, unit: str, target: str = "") -> str:
    return (
        f"{name:<44} {mine:>10.2f} {unit:<4} vs {base:>10.2f} {unit:<4}"
        f"  ratio {mine / base:6.2f}x  {target}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the smallest run: --repeat 1")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "step.py"
        script.write_text(SCRIPT)
        profiled = median_seconds(lambda: copies_in(script), repeat)
        plain = median_seconds(lambda: runpy.run_path(str(script), run_name="__main__"), repeat)
        lines = copies_in(script)
    reference = contiguous_copy_bandwidth(repeat) / 1e9
    model, images = build()
    source = inspect.getsourcefile(TinyVisionTransformer.forward)
    with torch.no_grad():
        session = median_seconds(
            lambda: trace_copies(lambda: model(images), source, runs=RUNS), repeat
        )
        traced = statistics.median(
            trace_copies(lambda: model(images), source, runs=RUNS).run_seconds
        )
        forward = median_seconds(lambda: model(images), repeat)

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; median of {repeat}\n")
    print(row("viewcopy copies, against the script plainly", profiled * 1e3, plain * 1e3, "ms"))
    print(
        row(f"traced forward (median of {RUNS}), against plain", traced * 1e3, forward * 1e3, "ms")
        + "  target <= 3x"
    )
    print(row("  the whole session, per forward", session / RUNS * 1e3, forward * 1e3, "ms"))
    print(f"\ncopy bandwidth, against contiguous dst.copy_(src) ({reference:.2f} GB/s)")
    for line in lines:
        bandwidth = 2 * line.bytes / (line.time_us * 1e-6) / 1e9  # read plus write
        print(row(f"  {line.line}: {line.code}"[:44], bandwidth, reference, "GB/s"))


if __name__ == "__main__":
    main()
