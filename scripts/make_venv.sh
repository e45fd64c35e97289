#!/usr/bin/env bash
# Create a virtual environment (once) with a current pip and uv:  bash scripts/make_venv.sh VENV PYTHON
# Used by setup_env.sh (Jazzy) and test_kilted.sh (Kilted); install_into.sh installs with uv.
set -euo pipefail
venv="${1:?usage: make_venv.sh VENV PYTHON}"
python="${2:?usage: make_venv.sh VENV PYTHON}"
if [ ! -x "$venv/bin/python" ]; then
    echo "setup: creating $venv with $($python --version)"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip uv
elif ! "$venv/bin/python" -m uv --version >/dev/null 2>&1; then
    # a venv from before uv was used: without it install_into.sh still works, with pip
    "$venv/bin/python" -m pip install -q uv || true
fi
