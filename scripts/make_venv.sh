#!/usr/bin/env bash
# Create a virtual environment (once) with a current pip:  bash scripts/make_venv.sh VENV PYTHON
# Used by setup_env.sh (Jazzy) and test_kilted.sh (Kilted).
set -euo pipefail
venv="${1:?usage: make_venv.sh VENV PYTHON}"
python="${2:?usage: make_venv.sh VENV PYTHON}"
if [ ! -x "$venv/bin/python" ]; then
    echo "setup: creating $venv with $($python --version)"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
fi
