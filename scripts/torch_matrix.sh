#!/usr/bin/env bash
# The torch range, measured: per torch version a cached venv (TORCH_MATRIX_CACHE, default
# .torch-venvs/<version>/) with that torch and the project, then the fast test subset
# (scripts/test.sh --fast) and one student's whole notebook filled in (scripts/filled_notebook.py).
# One line per version, and under a failing one what failed: each failing test with its assertion
# (scripts/failures.sh on its log), the notebook's last lines, or the build log's. Exit 1 if any
# fails.
# Usage: scripts/torch_matrix.sh [--build] [VERSION|floor|newest ...]   (default: VERSIONS below;
# "floor": its first, "newest": the newest torch pip serves here; --build: only build the venvs).
# CI builds the floor's venv and runs the floor beside the main suite (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSIONS=(2.4.1 2.13.0 newest)  # the floor's latest patch (engine/torch_range.py), the pin, newest
FAST="$(sed -n 's/^FAST="\(.*\)"$/\1/p' scripts/test.sh)"  # the fast subset, as test.sh --fast
[ -n "$FAST" ] || { echo "scripts/test.sh defines no FAST subset" >&2; exit 2; }
mkdir -p "${TORCH_MATRIX_CACHE:-.torch-venvs}"
EXTRAS=test,course  # as scripts/setup.sh installs them
PYTEST=(-q -p no:cacheprovider --tb=short)  # the log: short tracebacks, pyproject's -ra summary
cache="$(cd "${TORCH_MATRIX_CACHE:-.torch-venvs}" && pwd)"

newest() {  # the newest torch pip resolves here (its index and constraints), without installing
    local report
    report="$(mktemp)"
    python3 -m pip install --quiet --dry-run --no-deps --ignore-installed --report "$report" torch \
        2>/dev/null
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["install"][0]["metadata"]["version"])' \
        "$report"
    rm -f "$report"
}

venv_for() {  # build (once per version, pyproject.toml and checkout) and print the venv's folder
    local version="$1" venv="$cache/$1" log="$cache/$1.build.log" wanted has
    wanted="$(sha256sum pyproject.toml | cut -c1-16) $EXTRAS $PWD"
    [ -f "$venv/.matrix-stamp" ] && [ "$(cat "$venv/.matrix-stamp")" = "$wanted" ] &&
        echo "$venv" && return
    has="$("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null || true)"
    if [ "${has%%+*}" != "$version" ]; then  # torch itself is kept when only the project changed
        python3 -m venv --clear "$venv" || return 1
        "$venv/bin/python" -m pip install --quiet "torch==$version" >"$log" 2>&1 || return 1
    fi  # (errexit is off inside `if`: each step returns on failure)
    # torch pinned: a version outside pyproject's range fails here, never swapped for another
    "$venv/bin/python" -m pip install --quiet -e ".[$EXTRAS]" "torch==$version" >>"$log" 2>&1 ||
        return 1
    "$venv/bin/python" -c 'import torch, viewcopy' >>"$log" 2>&1 || return 1
    echo "$wanted" > "$venv/.matrix-stamp"
    echo "$venv"
}

indented() {  # COMMAND...: its output, indented under the line it explains
    "$@" 2>&1 | sed 's/^/    /' || true
}

build_only=0
[ "${1:-}" = --build ] && build_only=1 && shift
[ $# -gt 0 ] && VERSIONS=("$@")
failed=0
for version in "${VERSIONS[@]}"; do
    [ "$version" = floor ] && version="$(sed -n 's/^VERSIONS=(\([^ ]*\).*/\1/p' "$0")"
    [ "$version" = newest ] && version="$(newest)"
    began=$SECONDS
    if ! venv="$(venv_for "$version")"; then
        echo "torch $version: FAIL (could not build its venv: $cache/$version.build.log)"
        indented tail -n 20 "$cache/$version.build.log"
        failed=1
        continue
    fi
    built=$((SECONDS - began))
    if [ "$build_only" = 1 ]; then
        echo "torch $version: venv $venv (${built}s)"
        continue
    fi
    python="$venv/bin/python"
    found="$("$python" -c 'import numpy, torch; print(torch.__version__, "numpy", numpy.__version__)')"
    log="$venv/matrix.log"
    notebook_log="$venv/notebook.log"
    began=$SECONDS
    tests_ok=1
    notebook_ok=1
    # The fast subset needs no browser, sandbox, server or hub, and this venv has only the test and
    # course extras: CI's requirements for those (VIEWCOPY_REQUIRE_*) are the main suite's, and a
    # module that checks them when collected would fail here although its tests are deselected.
    env -u VIEWCOPY_REQUIRE_BROWSER -u VIEWCOPY_REQUIRE_SANDBOX -u VIEWCOPY_REQUIRE_POSTGRES \
        -u VIEWCOPY_REQUIRE_HUB -u VIEWCOPY_REQUIRE_LTI PATH="$venv/bin:$PATH" \
        "$python" -m pytest "${PYTEST[@]}" -m "$FAST" >"$log" 2>&1 || tests_ok=0
    tests="$(grep -E '^=* ?[0-9]+ (passed|failed|errors?)\b' "$log" | tail -1 | tr -d '=' || true)"
    tests_s=$((SECONDS - began))
    began=$SECONDS
    PATH="$venv/bin:$PATH" "$python" scripts/filled_notebook.py >"$notebook_log" 2>&1 ||
        notebook_ok=0
    notebook="$(grep '^notebook: ' "$notebook_log" | tail -1 || true)"
    notebook_s=$((SECONDS - began))
    status=ok
    [ "$tests_ok$notebook_ok" = 11 ] || { status=FAIL; failed=1; }
    echo "torch $found: $status | tests: ${tests:-none (see $log)} (${tests_s}s) |" \
        "${notebook:-notebook: crashed (see $notebook_log)} (${notebook_s}s) | venv ${built}s"
    [ "$tests_ok" = 1 ] || indented scripts/failures.sh "$log"
    [ "$notebook_ok" = 1 ] || indented tail -n 20 "$notebook_log"
done
exit $failed
