#!/usr/bin/env bash
# Set up .venv if needed, then run the main job: `viewcopy demo`, a whole nbgrader cycle on a
# synthetic class in demo_course/. Arguments go to `viewcopy demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
viewcopy demo "$@"
