#!/usr/bin/env bash
# Set up .venv if needed, then lint and run every test, with the project's environment on PATH
# (nbgrader calls tools from it). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
ruff check src tests benchmarks
python -m pytest "$@"
