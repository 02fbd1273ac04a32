#!/usr/bin/env bash
# What failed, from a log. A pytest run's log (its short summary on, as pyproject's -ra has it):
# each failing test's summary line (`FAILED path::test - AssertionError: ...`; pytest may trim the
# message to the terminal's width), then per failure its header, where it failed (`path:line`, the
# `>` line) and its `E` lines, whatever --tb was, at most LINES lines of them. Any other log
# (setup, a crash before the tests): its last LINES lines.
# Usage: scripts/failures.sh LOG [LINES]   (default 60). scripts/torch_matrix.sh and .ci/run print
# it under the line that says what failed.
set -euo pipefail
log="$1"
most="${2:-60}"

tracebacks() {  # per failure: its header, where it failed, its E lines (no captured output)
    awk '
        /^=+ (FAILURES|ERRORS) =+$/ { shown = 1; next }
        /^=+ .+ =+$/ { shown = 0 }
        shown && /^-+ Captured .+ -+$/ { captured = 1; next }
        shown && /^_+ .+ _+$/ { captured = 0 }
        shown && !captured && /^(_+ .+ _+|>.*|E .*|[^ ]+:[0-9]+: .*)$/
    ' "$log"
}

summary="$(grep -E '^(FAILED|ERROR) ' "$log" || true)"
if [ -z "$summary" ]; then
    tail -n "$most" "$log"
    exit 0
fi
echo "$summary"
details="$(tracebacks)"
sed -n "1,${most}p" <<<"$details"
lines="$(wc -l <<<"$details")"
[ "$lines" -le "$most" ] || echo "... $((lines - most)) more lines in $log"
