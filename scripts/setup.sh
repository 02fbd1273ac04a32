#!/usr/bin/env bash
# Set up .venv with everything the module, its tests and the course need; a no-op when .venv is
# already set up from this pyproject.toml and this script (the stamp records which).
# torch is installed first and pinned: an unpinned torch on Linux pulls a multi-GB CUDA build.
# Override with TORCH_SPEC (e.g. TORCH_SPEC='torch==2.13.0 --index-url ...') for another build.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=".venv/.viewcopy-setup"
wanted="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1) ${TORCH_SPEC:-torch==2.13.0}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -x .venv/bin/viewcopy ]; then
    exit 0
fi
# `viewcopy grade` runs each student's kernel in bubblewrap: install it where we can (Debian/Ubuntu
# as root); elsewhere it says how, and grading needs it or an explicit --no-sandbox.
if ! command -v bwrap >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
    else
        echo "note: install bubblewrap (sudo apt-get install bubblewrap) to grade in a sandbox" >&2
    fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet ${TORCH_SPEC:-torch==2.13.0}
.venv/bin/python -m pip install --quiet -e '.[test,course,hub]'
# jsonschema imports rfc3987-syntax (an IRI format checker that jupyter-events' extra pulls in) on
# every nbformat import and compiles its grammar there: 1.2 s of CPU in each nbgrader, grading
# worker and Jupyter server process (the suite starts about 170), for the "iri" format, which no
# notebook or event schema here uses. Without it jsonschema leaves that format unchecked.
.venv/bin/python -m pip uninstall --quiet --yes rfc3987-syntax
# JupyterHub's proxy (`viewcopy hub`) is a node program: into .venv/bin, beside jupyterhub.
if command -v npm >/dev/null; then
    npm install --global --silent --prefix .venv configurable-http-proxy@5 >/dev/null
    # axe-core, pinned, for the accessibility audit in Chromium (tests/support/axe.py pins the same)
    npm install --global --silent --prefix .venv axe-core@4.14.1 >/dev/null
else
    echo "note: install node and npm for \`viewcopy hub\` (JupyterHub's configurable-http-proxy)" >&2
    echo "      and for the accessibility audit (axe-core)" >&2
fi
echo "$wanted" > "$stamp"
echo "ready: $(.venv/bin/python -c 'import torch, viewcopy; print("torch", torch.__version__)')"
