"""How long the commands that measure nothing take to start, against `python -c pass`, measured
side by side in one run (each command and the baseline take turns; the median of the repeats).

Target: each of them at most 0.3 s. `viewcopy probe` is shown for contrast: it measures, so it
loads torch.

Run: .venv/bin/python benchmarks/bench_start.py [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.3
VIEWCOPY = [sys.executable, "-m", "viewcopy.cli"]


def commands(scratch: Path) -> dict[str, list[str]]:
    """What is timed: a label and its command line."""
    empty = scratch / "empty_course"
    empty.mkdir(exist_ok=True)
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import viewcopy": [sys.executable, "-c", "import viewcopy"],
        "import the lock client": [
            sys.executable,
            "-c",
            "import viewcopy.locking.client",
        ],
        "viewcopy --help": [*VIEWCOPY, "--help"],
        "viewcopy lock-service token s1": [
            *VIEWCOPY,
            "lock-service",
            "token",
            "s1",
            "--data",
            str(scratch / "service"),
        ],
        "viewcopy five (nothing graded yet)": [*VIEWCOPY, "five", "--course", str(empty)],
        "viewcopy five --help": [*VIEWCOPY, "five", "--help"],
        "viewcopy report --help": [*VIEWCOPY, "report", "--help"],
        "viewcopy grade --help": [*VIEWCOPY, "grade", "--help"],
        "viewcopy probe x.t() (measures)": [*VIEWCOPY, "probe", "x.t()"],
    }


def once(command: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="the smallest run: --repeats 1")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    with tempfile.TemporaryDirectory() as tmp:
        timed = commands(Path(tmp))
        for command in timed.values():  # warm the page cache and the bytecode
            once(command)
        runs: dict[str, list[float]] = {label: [] for label in timed}
        for _ in range(repeats):
            for label, command in timed.items():
                runs[label].append(once(command))
    baseline = statistics.median(runs["python -c pass"])
    print(f"median of {repeats} runs each, interleaved; target: at most {TARGET_S * 1000:.0f} ms")
    print(f"{'command':38} {'ms':>7} {'x python -c pass':>17}  target")
    for label, times in runs.items():
        median = statistics.median(times)
        verdict = (
            ""
            if label == "python -c pass" or "measures" in label
            else ("met" if median <= TARGET_S else "MISSED")
        )
        print(f"{label:38} {median * 1000:7.0f} {median / baseline:16.1f}x  {verdict}")


if __name__ == "__main__":
    main()
