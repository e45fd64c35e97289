#!/usr/bin/env bash
# The test suite on a fresh machine: set up the environment, then run every test on ROS 2
# Jazzy, then the ROS-facing ones on Kilted too (scripts/test_kilted.sh; RBD_KILTED=0 skips).
set -uo pipefail
here="$(dirname "$0")"
# Kilted gets the environment as it was before Jazzy's (library paths, ament prefixes)
clean=(env -i HOME="$HOME" PATH="$PATH" TERM="${TERM:-dumb}")
source "$here/setup_env.sh" || exit 1
python -m pytest test -q -p no:cacheprovider "$@"
status=$?
if [ "${RBD_KILTED:-1}" != 0 ]; then
    "${clean[@]}" bash "$here/test_kilted.sh" || status=1
fi
exit $status
