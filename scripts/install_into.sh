#!/usr/bin/env bash
# Install into a virtual environment:  bash scripts/install_into.sh VENV [pip install arguments]
#
# With uv (a PyPI package, which make_venv.sh puts into each venv) where it works, else pip:
# uv downloads in parallel, so a fresh set-up's ~260 packages take ~18 s instead of pip's
# ~55 s (the same registries, an empty cache, this 2-core machine). Files are copied out of
# uv's cache, not hard-linked to it: the set-up edits some (build_interfaces.sh). uv reads no pip
# configuration, so the index URLs and certificate pip is configured with are handed on,
# and it picks the best version over all indexes, as pip does. Whatever uv refuses is
# installed by pip instead, the same way as before uv was here. rbd_control itself is always
# rebuilt and reinstalled, as pip does for a directory (uv would reuse its cached build
# when only a module changed: it watches setup.py and pyproject.toml alone).
set -uo pipefail
venv="${1:?usage: install_into.sh VENV [pip install arguments]}"
shift
python="$venv/bin/python"

if "$python" -m uv --version >/dev/null 2>&1; then
    pip_config="$("$python" -m pip config list 2>/dev/null)"   # environment and files
    pip_setting() {   # the value pip is configured with for KEY, or nothing
        sed -n "s/^[^.]*\.$1='\(.*\)'$/\1/p" <<<"$pip_config" | tail -n 1
    }
    index="$(pip_setting index-url)"
    extra="$(pip_setting extra-index-url)"
    cert="$(pip_setting cert)"
    if env ${index:+UV_DEFAULT_INDEX="$index"} ${extra:+UV_INDEX="$extra"} \
            ${cert:+SSL_CERT_FILE="${SSL_CERT_FILE:-$cert}"} \
            UV_INDEX_STRATEGY=unsafe-best-match UV_NO_PROGRESS=1 UV_LINK_MODE=copy \
            "$python" -m uv pip install -q --python "$python" \
            --refresh-package rbd_control --reinstall-package rbd_control "$@"; then
        exit 0
    fi
    echo "install_into: uv failed (above); installing with pip instead" >&2
fi
exec "$python" -m pip install -q "$@"
