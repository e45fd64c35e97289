#!/usr/bin/env bash
# The test suite on a fresh machine: set up the environment, then run every test.
set -uo pipefail
source "$(dirname "$0")/setup_env.sh" || exit 1
python -m pytest test -q -p no:cacheprovider "$@"
