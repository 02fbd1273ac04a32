#!/usr/bin/env bash
# Run every path that needs CUDA, on one GPU, in under 8 minutes; one summary line per path:
#   PASS|SKIP|FAIL <path>: <detail>
# Without CUDA it still runs the paths that work on CPU (the device tests, the key), prints SKIP for
# the CUDA-only ones and exits 0. Each step's output is shown indented above its summary line, and
# the summary lines are repeated at the end. Exit status: 1 when any path FAILs, else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PY=.venv/bin/python
VIEWCOPY=.venv/bin/viewcopy
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$SECONDS
summary=()
failed=0

say() { # status path detail...
    local line="$1 $2: ${*:3}"
    summary+=("$line")
    echo "$line"
    if [ "$1" = FAIL ]; then failed=1; fi
}

step() { # name seconds command...: run it under a time limit, show its output, keep it in $work
    local name="$1" limit="$2"
    shift 2
    echo "== $name: $*"
    rc=0
    timeout "$limit" "$@" >"$work/$name.out" 2>&1 || rc=$?
    # long outputs (the key) are shown by their ends, so the summary stays in a short log's tail
    awk 'NR <= 12 {print "    " $0} {last[NR % 6] = $0}
        END {if (NR > 18) print "    ... (" NR " lines)"; for (i = (NR > 18 ? NR - 5 : 13); i <= NR; i++) print "    " last[i % 6]}' \
        "$work/$name.out"
    if [ "$rc" = 124 ]; then echo "    (timed out after ${limit}s)"; fi
    return "$rc"
}

counts() { # the pytest tally line of a step's output, e.g. "12 passed, 3 skipped"
    grep -E '^[0-9]+ (passed|failed|skipped|error|deselected)' "$work/$1.out" | tail -1 |
        sed -E 's/ in [0-9.]+s.*$//' || true
}

no_cuda_skips() { # fails when pytest skipped a case because CUDA was missing
    ! grep -qEi '^SKIPPED.*cuda' "$work/$1.out"
}

has_cuda="$($PY -c 'import torch; print(torch.cuda.is_available())')"
if [ "$has_cuda" = True ]; then
    say PASS cuda "$($PY -c 'import torch; print(torch.cuda.get_device_name(), "torch", torch.__version__, "CUDA", torch.version.cuda)')"
else
    say SKIP cuda "no CUDA device (torch $($PY -c 'import torch; print(torch.__version__)'))"
fi

# (a) the tests that skip without CUDA
if step devices 150 "$PY" -m pytest -q -p no:cacheprovider -rs tests/engine/test_devices.py; then
    if [ "$has_cuda" = True ] && ! no_cuda_skips devices; then
        say FAIL devices-tests "$(counts devices), but CUDA cases skipped on a CUDA machine"
    else
        say PASS devices-tests "$(counts devices)"
    fi
else
    say FAIL devices-tests "$(counts devices) (pytest exit $rc)"
fi

# (b) the key on every device here
if step key 90 "$VIEWCOPY" key --device all --format csv; then
    if detail="$($PY -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
devices = sorted({r["device"] for r in rows})
print(len(rows), "rows on", "/".join(devices), "(cuda present)" if "cuda" in devices else "(no cuda)")
sys.exit(sys.argv[2] == "True" and "cuda" not in devices)
' "$work/key.out" "$has_cuda" 2>&1)"; then
        say PASS key "$detail"
    else
        say FAIL key "$detail"
    fi
else
    say FAIL key "viewcopy key exit $rc"
fi

if [ "$has_cuda" != True ]; then
    for path in costs probe copies classify-checks gpu-lane; do say SKIP "$path" "no CUDA device"; done
else
    # (c) what a copy costs, on CUDA
    if step costs 90 "$PY" -c 'import pandas as pd
from viewcopy.display.cost_figure import cost_table
from viewcopy.engine.cost import measure_costs
pd.set_option("display.width", 200)
report = measure_costs("cuda")
print(cost_table(report).to_string())
copies = ", ".join(f"{r.name} {r.of_floor:.0%}" for r in report.rows[1:3])
busy = " (too busy: no share shown)" if not report.floor.compares(r.bandwidth_gbs for r in report.rows) else ""
print(f"detail: floor {report.floor.gbs:.0f} GB/s{busy}; {copies} of floor")'; then
        say PASS costs "$(grep '^detail: ' "$work/costs.out" | sed 's/^detail: //')"
    else
        say FAIL costs "measure_costs(\"cuda\") exit $rc: $(tail -1 "$work/costs.out")"
    fi

    # (d) one probe on CUDA
    if step probe 45 "$VIEWCOPY" probe 'x.t().contiguous()' --device cuda --format json; then
        if detail="$($PY -c 'import json, sys
e = json.load(open(sys.argv[1]))
print(e["verdict"], "on", e["device"] + ",", e["bytes_allocated"], "bytes, kernels", e["copy_kernels"])
sys.exit((e["verdict"], e["device"]) != ("copy", "cuda"))
' "$work/probe.out" 2>&1)"; then
            say PASS probe "$detail"
        else
            say FAIL probe "$detail"
        fi
    else
        say FAIL probe "viewcopy probe exit $rc"
    fi

    # (e) viewcopy copies, where this build has it
    if ! "$VIEWCOPY" copies --help >/dev/null 2>&1; then
        say SKIP copies "this build has no 'viewcopy copies'"
    else
        printf '%s\n' 'import torch' 'x = torch.arange(24.0).reshape(4, 6)' 'y = x.t().contiguous()' \
            'z = x.permute(1, 0)' 'print("ran on", y.device, z.sum().item())' >"$work/tiny.py"
        if step copies 45 "$VIEWCOPY" copies "$work/tiny.py" --device cuda; then
            found="$(grep -c 'aten::' "$work/copies.out" || true)"
            if [ "$found" -gt 0 ] && grep -q '^ran on cuda' "$work/copies.out"; then
                say PASS copies "$found copy line(s) reported for the tiny script's .contiguous(), on cuda"
            else
                say FAIL copies "$found copy line(s); the tiny script $(grep '^ran on' "$work/copies.out" || echo 'did not run')"
            fi
        else
            say FAIL copies "viewcopy copies exit $rc: $(tail -1 "$work/copies.out")"
        fi
    fi

    # (f) the classify checks, which grade on every available device
    if step classify 150 "$PY" -m pytest -q -p no:cacheprovider -rs tests/lab/test_checks.py -k classify; then
        if no_cuda_skips classify; then
            say PASS classify-checks "$(counts classify)"
        else
            say FAIL classify-checks "$(counts classify), but CUDA cases skipped on a CUDA machine"
        fi
    else
        say FAIL classify-checks "$(counts classify) (pytest exit $rc)"
    fi

    # (g) the GPU lane: a Dask worker with --resources GPU=1 grades a hand-in on cpu+cuda
    if step gpu-lane 300 "$PY" -m pytest -q -p no:cacheprovider -rs tests/grading/test_cluster.py -k cuda; then
        if grep -qE '^2 passed' "$work/gpu-lane.out"; then
            say PASS gpu-lane "$(counts gpu-lane): graded on the GPU worker, on cpu+cuda"
        else
            say FAIL gpu-lane "$(counts gpu-lane): the cluster tests did not run"
        fi
    else
        say FAIL gpu-lane "$(counts gpu-lane) (pytest exit $rc)"
    fi
fi

echo "== summary ($((SECONDS - started))s)"
printf '%s\n' "${summary[@]}"
exit "$failed"
