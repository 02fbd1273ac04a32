#!/usr/bin/env bash
# Set up .venv if needed, then lint and run every test, with the project's environment on PATH
# (nbgrader calls tools from it). Arguments go to pytest; --fast first runs the fast subset. A step
# that fails before the tests says which; pytest ends with its short summary (pyproject's -ra), a
# line per failing test.
set -euo pipefail
cd "$(dirname "$0")/.."

step=""  # the step before the tests now running: a failing one is named
trap 'rc=$?; [ -z "$step" ] || echo "scripts/test.sh: $step failed (exit $rc)" >&2' ERR

step="setup (scripts/setup.sh)"
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
step="lint (ruff check)"
ruff check src tests benchmarks
step=""
# Two pytest-xdist workers: the modules on the session's class on one, the others beside it, a
# module at a time (tests/conftest.py's xdist_groups).
WORKERS=(-n 2 --dist loadgroup --no-loadscope-reorder)
# --fast: only the tests that need no course, browser, server, hub or sandbox (about a minute here).
FAST="not (course or sandbox or cluster or browser or postgres or service or hub or lms or slow)"
if [ "${1:-}" = "--fast" ]; then
    shift
    rc=0
    python -m pytest "${WORKERS[@]}" -m "$FAST" "$@" || rc=$?
    echo "fast subset only: scripts/test.sh runs everything (as CI does), -m course (or sandbox,"
    echo "cluster, browser, postgres, service, hub, lms, slow) one part"
    exit "$rc"
fi
python -m pytest "${WORKERS[@]}" "$@"
