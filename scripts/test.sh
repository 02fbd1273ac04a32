#!/usr/bin/env bash
# Lint and run every test, with the project's environment on PATH (nbgrader calls tools from it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
ruff check src tests benchmarks
python -m pytest "$@"
