"""The service holds a class through the hub: a real JupyterHub (`viewcopy hub`'s state, N students)
and its lock service, the same load sent through the hub's proxy and straight to the service, side
by side in one run.

The load, per student in order: a lock (fingerprint A), the reveal (A), a late lock (fingerprint B)
that must be refused with 409; `--concurrency` students at once, each request timed on its own.
Both passes send hub tokens, so both pay the hub's identity check: the difference is the proxy.
Each pass has its own fresh token per student (made with the course-admin token before any timing)
and its own assignment name: the service keeps the hub's answer per token for 60 s, so tokens
reused from the first pass would let the second skip the hub. One unauthenticated GET /v1/health
per path first warms the route. Then the service's records on disk are checked: one lock of A, the
reveal and one refused lock for every student of each pass; any status other than 200 for the lock
and the reveal and 409 for the late lock, or any failed request, exits non-zero.

The hub cache's effect, from the same requests: the lock (the student's first request: the service
asks the hub who it is and whether a student) against the reveal (the same work, the answer
cached); the late lock does less work, so it is left out of that comparison.

Run: .venv/bin/python benchmarks/bench_hub_locks.py [--students N] [--concurrency C] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from viewcopy.hub.launch import free_ports, start
from viewcopy.hub.state import prepare
from viewcopy.locking.store import student_locks

REPO = Path(__file__).resolve().parents[1]
SERVICE = "/services/viewcopy-lock"
A, B = "a" * 64, "b" * 64
STEPS = (("lock", "lock", A, 200), ("reveal", "reveal", A, 200), ("late lock", "lock", B, 409))
TIMEOUT_S = 60


def request(url: str, token: str | None = None, body: dict | None = None) -> tuple[int, bytes]:
    """(status, answer) of one request; an HTTP error's status is an answer, not a failure."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data else {}
    if token:
        headers["Authorization"] = f"token {token}"
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data, headers), timeout=TIMEOUT_S
        ) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def hub_token(hub_url: str, admin_token: str, student: str) -> str:
    status, answer = request(
        f"{hub_url}/hub/api/users/{student}/tokens", admin_token, {"note": "bench"}
    )
    if status != 201:
        raise RuntimeError(f"the hub refused a token for {student}: {status} {answer[:300]!r}")
    return json.loads(answer)["token"]


def one_student(base: str, token: str, assignment: str) -> list[tuple[str, object, float]]:
    """(step, status or the exception's text, seconds) of each of the student's requests."""
    timed = []
    for step, path, fingerprint, _ in STEPS:
        began = time.perf_counter()
        try:
            status, answer = request(
                f"{base}/v1/{path}", token, {"assignment": assignment, "fingerprint": fingerprint}
            )
            outcome = status if status in (200, 409) else f"{status} {answer[:200]!r}"
        except Exception as error:  # noqa: BLE001 (reported, and the script fails)
            outcome = f"{type(error).__name__}: {error}"
        timed.append((step, outcome, time.perf_counter() - began))
    return timed


def each(work, items: list[str], at_once: int) -> dict[str, object]:
    """`work(item)` for every item, `at_once` at a time, by item."""
    with ThreadPoolExecutor(at_once) as pool:
        return dict(zip(items, pool.map(work, items), strict=True))


def load(base: str, tokens: dict[str, str], assignment: str, concurrency: int):
    """Every student's requests, students `concurrency` at once; (results by student, wall s)."""
    began = time.perf_counter()
    results = each(lambda s: one_student(base, tokens[s], assignment), list(tokens), concurrency)
    return results, time.perf_counter() - began


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def problems(results: dict, lock_data: Path, assignment: str) -> list[str]:
    """What went wrong: unexpected statuses, and records on disk that are not what was sent."""
    found = []
    for student, timed in results.items():
        for (step, outcome, _), (_, _, _, expected) in zip(timed, STEPS, strict=True):
            if outcome != expected:
                found.append(f"{student} {step}: expected {expected}, got {outcome}")
        locks = student_locks(lock_data, student, assignment)
        if (
            locks is None
            or [fp for fp, _ in locks.locks] != [A]
            or locks.revealed_fingerprint != A
            or locks.refused != 1
        ):
            found.append(f"{student}: recorded {locks}")
    return found


def report(name: str, results: dict, wall: float) -> dict[str, float]:
    times = [seconds for timed in results.values() for _, _, seconds in timed]
    by_step = {step: [t[i][2] for t in results.values()] for i, (step, *_) in enumerate(STEPS)}
    statuses: dict[object, int] = {}
    for timed in results.values():
        for _, outcome, _ in timed:
            key = outcome if isinstance(outcome, int) else "other"
            statuses[key] = statuses.get(key, 0) + 1
    figures = {
        "rps": len(times) / wall,
        "p50": percentile(times, 50) * 1000,
        "p99": percentile(times, 99) * 1000,
    }
    print(
        f"{name:7} {len(times):5d} requests  wall {wall:7.2f} s  {figures['rps']:7.1f} req/s  "
        f"p50 {figures['p50']:7.1f} ms  p99 {figures['p99']:7.1f} ms  "
        f"statuses {', '.join(f'{n} x {s}' for s, n in statuses.items())}"
    )
    print(
        "        p50 by step: "
        + ", ".join(f"{step} {statistics.median(t) * 1000:.1f} ms" for step, t in by_step.items())
        + f"; hub cache: lock (asks the hub) / reveal (cached) "
        f"{statistics.median(by_step['lock']) / statistics.median(by_step['reveal']):.2f}x"
    )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="the smallest run: 2 students")
    args = parser.parse_args()
    if args.quick:
        args.students, args.concurrency = 2, 2
    students = [f"s{i:03d}" for i in range(args.students)]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o711)  # each person's server, as its own Unix user, passes to its home
        port, *ports = free_ports(4)
        began = time.perf_counter()
        state = prepare(REPO, Path(tmp) / "hub", port, ports, students)
        hub = start(REPO, state)
        print(f"hub with {len(students)} students ready in {time.perf_counter() - began:.1f} s")
        try:
            passes = {
                "proxy": f"{state.url}{SERVICE}",
                "direct": f"http://127.0.0.1:{state.lock_port}{SERVICE}",
            }
            admin = state.secret("admin_token")
            tokens = {
                name: each(lambda s: hub_token(state.url, admin, s), students, 8) for name in passes
            }
            for base in passes.values():
                for _ in range(3):
                    status, answer = request(f"{base}/v1/health")
                    if status != 200:
                        raise RuntimeError(f"{base}/v1/health answered {status}: {answer!r}")
            print(
                f"{args.students} students x {len(STEPS)} requests per pass, "
                f"{args.concurrency} students at once; p50/p99 over every request of the pass"
            )
            figures, failures = {}, []
            for name, base in passes.items():
                results, wall = load(base, tokens[name], f"bench-{name}", args.concurrency)
                figures[name] = report(name, results, wall)
                failures += [
                    f"{name}: {p}" for p in problems(results, state.lock_data, f"bench-{name}")
                ]
        finally:
            killed = hub.stop()
            print("hub stopped" + (f" (killed {killed})" if killed else ", nothing left running"))
    proxy, direct = figures["proxy"], figures["direct"]
    print(
        f"proxy / direct: req/s {proxy['rps'] / direct['rps']:.2f}x, "
        f"p50 {proxy['p50'] / direct['p50']:.2f}x, p99 {proxy['p99'] / direct['p99']:.2f}x"
    )
    if failures:
        print(f"{len(failures)} problems:", *failures[:20], sep="\n  ")
        return 1
    print(
        f"records on disk: every one of the {args.students} students in both passes has one "
        "lock of A, the reveal and one refused late lock"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
