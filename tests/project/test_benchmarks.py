"""Every script in benchmarks/ runs in its smallest form (`--quick`) and prints its result lines.
Only their shape is checked, never the figures: speed targets stay out of tests
(docs/benchmarks.md)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from support.chromium import unavailable
from support.course_notebook import ROOT
from support.sandboxing import sandbox_or_skip

BENCHMARKS = ROOT / "benchmarks"
TIMEOUT_S = 900
NUMBER = r"\d+(?:\.\d+)?"
RATIO = rf"{NUMBER}x"
AGAINST = rf"{NUMBER} (ms|KiB|GB/s) +vs +{NUMBER} \1 +ratio +{RATIO}"
"""A row of bench_lab.py or bench_copies.py: its figure, its baseline's and their ratio."""


def hub_or_skip() -> None:
    """JupyterHub and its proxy, or skip; fail instead where VIEWCOPY_REQUIRE_HUB=1 (CI)."""
    from viewcopy.hub.state import find_proxy

    if importlib.util.find_spec("jupyterhub") is None:
        unavailable(
            "jupyterhub is not installed (scripts/setup.sh installs it)", "VIEWCOPY_REQUIRE_HUB"
        )
    try:
        find_proxy()
    except FileNotFoundError as missing:
        unavailable(str(missing), "VIEWCOPY_REQUIRE_HUB")


@dataclass(frozen=True)
class Benchmark:
    """What a benchmark's quick run must print (a pattern per line), what it needs of the machine
    (its markers, and a check that skips or fails the test), and nothing of its figures."""

    lines: tuple[str, ...]
    marks: tuple[pytest.MarkDecorator, ...] = ()
    needs: Callable[[], None] | None = None


EXPECTED = {
    "bench_lab.py": Benchmark(
        (
            rf"^first reveal, cold .* {AGAINST}",
            rf"^draw 1 B expanded to 4 GiB, against x .* {AGAINST}",
            rf"^  peak memory drawing it, against x .* {AGAINST}",
            rf"^probe 1 B expanded to 4 GiB, against x .* {AGAINST}",
        ),
        (pytest.mark.slow,),
    ),
    "bench_start.py": Benchmark(
        tuple(
            rf"^{re.escape(command)} +{NUMBER} +{RATIO}"
            for command in (
                "python -c pass",
                "viewcopy --help",
                "viewcopy lock-service token s1",
                "viewcopy five (nothing graded yet)",
                "viewcopy probe x.t() (measures)",
            )
        ),
        (pytest.mark.slow,),
    ),
    "bench_copies.py": Benchmark(
        (
            rf"^viewcopy copies, against the script plainly +{AGAINST}",
            rf"^traced forward \(median of \d+\), against plain +{AGAINST}",
            rf"^  the whole session, per forward +{AGAINST}",
            rf"^copy bandwidth, against contiguous dst\.copy_\(src\) \({NUMBER} GB/s\)",
            rf"^  \d+: t = x\.t\(\)\.contiguous\(\) +{AGAINST}",
        ),
        (pytest.mark.slow,),
    ),
    "bench_hub_locks.py": Benchmark(
        (
            rf"^proxy +\d+ requests +wall +{NUMBER} s +{NUMBER} req/s +p50 +{NUMBER} ms",
            rf"^direct +\d+ requests +wall +{NUMBER} s +{NUMBER} req/s +p50 +{NUMBER} ms",
            rf"^proxy / direct: req/s {RATIO}, p50 {RATIO}, p99 {RATIO}$",
            r"^records on disk: every one of the \d+ students in both passes",
        ),
        (pytest.mark.hub,),
        hub_or_skip,
    ),
    "bench_similarity.py": Benchmark(
        (
            rf"^\d+ hand-ins: similarity in {NUMBER} s, \d+ pairs listed$",
            r"^planted pairs listed: \d+/\d+$",
            r"^other pairs listed: \d+$",
            rf"^planted pairs' scores \(threshold {NUMBER}\): {NUMBER}(, {NUMBER})*$",
        ),
    ),
    "class_report.py": Benchmark(
        (
            rf"^graded \d+ hand-ins \(viewcopy grade, \d+ workers\) +{NUMBER} s$",
            rf"^class report of the same \d+ hand-ins +{NUMBER} s +{RATIO} the grading$",
            r"^target: the report of 1000 hand-ins in at most 60 s: (met|not met|not measured)",
            rf"^  imports: the report's modules .* +{NUMBER} s +{NUMBER}%$",
            rf"^  reading hand-ins: submitted/ .* +{NUMBER} s +{NUMBER}%$",
            rf"^  judging the hand-ins .* +{NUMBER} s +{NUMBER}%$",
            rf"^  writing files: encoding PNGs \(savefig\) +{NUMBER} s +{NUMBER}%$",
            rf"^  similarity +{NUMBER} s +{NUMBER}%$",
        ),
        (pytest.mark.course, pytest.mark.sandbox),
    ),
    "grading.py": Benchmark(
        (
            rf"^floor: kernel, import torch, shutdown +{NUMBER}s +{NUMBER}s +{RATIO}",
            rf"^nbgrader autograde \(serial\) +{NUMBER}s +{NUMBER}s +{RATIO}",
            rf"^viewcopy grade --jobs 1 +{NUMBER}s +{NUMBER}s +{RATIO}",
            rf"^viewcopy grade \(default: --jobs \d+\) +{NUMBER}s +{NUMBER}s +{RATIO}",
            rf"^speed-up over plain nbgrader: {RATIO}",
            rf"^a small class: viewcopy grade --jobs 1 on 1 hand-ins, .* {NUMBER} s: {RATIO} "
            r"\(target <= 1\.0x: (NOT )?met\)",
            rf"^each further hand-in: .*( = {NUMBER} m?s .*: {RATIO} "
            r"\(target <= 0\.4x: (NOT )?met\)"
            r"|: the larger class was no slower in this run, .* \(target <= 0\.4x: not measured\))",
            rf"^whole: one hand-in autograded( +{NUMBER} m?s +100.0%){{3}}$",
            r"^scores identical to plain nbgrader autograde: warm yes, fresh yes, before yes",
        ),
        (pytest.mark.course, pytest.mark.sandbox),
    ),
    "sandbox_stress.py": Benchmark(
        (
            r"^forks: (\d+) of \1 kernels forked warm, 0 fell back to fresh, 0 outside",
            r"^escapes: (\d+) of \1 rounds held",
        ),
        (pytest.mark.course, pytest.mark.sandbox),
        sandbox_or_skip,
    ),
}
"""Each script in benchmarks/ by name: a new one must be declared here, and accept --quick."""


def declared(script: str) -> Benchmark:
    """The script's declaration; an undeclared one must still run with --quick."""
    return EXPECTED.get(script, Benchmark(()))


SCRIPTS = sorted(path.name for path in BENCHMARKS.glob("*.py"))


def test_every_script_in_benchmarks_declares_its_result_lines():
    assert sorted(EXPECTED) == SCRIPTS


@pytest.mark.parametrize(
    "script", [pytest.param(s, marks=declared(s).marks, id=s) for s in SCRIPTS]
)
def test_the_benchmark_runs_quick_and_prints_its_result_lines(script, tmp_path):
    benchmark = declared(script)
    if benchmark.needs:
        benchmark.needs()
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    said = f"stdout:\n{run.stdout[-4000:]}\nstderr:\n{run.stderr[-4000:]}"
    assert run.returncode == 0, said
    missing = [line for line in benchmark.lines if not re.search(line, run.stdout, re.MULTILINE)]
    assert missing == [], said
