#!/usr/bin/env bash
# The test suite on a fresh machine: set up the environment, then run every test on ROS 2
# Jazzy, then the ROS-facing ones on Kilted too (scripts/test_kilted.sh; RBD_KILTED=0 skips).
# Extra arguments go to every pytest run.
set -uo pipefail
here="$(dirname "$0")"
# Kilted gets the environment as it was before Jazzy's (library paths, ament prefixes)
clean=(env -i HOME="$HOME" PATH="$PATH" TERM="${TERM:-dumb}")
kilted=${RBD_KILTED:-1}
if [ "$kilted" != 0 ]; then
    # Kilted's environment builds beside Jazzy's set-up (downloads, and a kernel compile that
    # keeps only one of two cores busy); its log is shown before Kilted's tests
    kilted_log="$(mktemp)"
    "${clean[@]}" bash "$here/test_kilted.sh" --prepare >"$kilted_log" 2>&1 &
    kilted_prepare=$!
fi
source "$here/setup_env.sh" || exit 1
# The demo (lock step: it waits for nothing in real time) runs beside the tests that start no
# node, on the other core; then the node tests, some of which run in real time, alone.
demo_test=test/sim/test_bringup_and_demo.py
demo_log="$(mktemp)"
python -m pytest "$demo_test" -q -p no:cacheprovider "$@" >"$demo_log" 2>&1 &
demo=$!
python -m pytest test -q -p no:cacheprovider --ignore=test/ros --ignore=test/sim "$@"
status=$?
wait "$demo" || status=1
echo "--- $demo_test"
cat "$demo_log"
python -m pytest test/ros test/sim -q -p no:cacheprovider --ignore "$demo_test" "$@" || status=1
if [ "$kilted" != 0 ]; then
    wait "$kilted_prepare"
    prepared=$?
    cat "$kilted_log"
    if [ $prepared = 0 ]; then
        "${clean[@]}" KILTED_PREPARED=1 bash "$here/test_kilted.sh" || status=1
    else
        echo "test_kilted: building the Kilted environment failed (above)"
        status=1
    fi
fi
exit $status
