#!/usr/bin/env bash
# The test suite on a fresh machine: set up the environment, then run every test on ROS 2
# Jazzy, and the ROS-facing ones on Kilted too (scripts/test_kilted.sh; RBD_KILTED=0 skips).
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
# The tests that start nodes (marked `nodes` by test/conftest.py; several run in real time)
# run at normal priority. Beside them, niced so they only fill the cores the nodes leave idle:
# the demo (lock step: it waits for nothing in real time), then the tests that only compute.
demo_test=test/sim/test_bringup_and_demo.py
niced_log="$(mktemp)"
(
    status=0
    nice -n 10 python -m pytest "$demo_test" -q -p no:cacheprovider "$@" || status=1
    nice -n 10 python -m pytest test -m "not nodes" -q -p no:cacheprovider "$@" || status=1
    exit $status
) >"$niced_log" 2>&1 &
niced=$!
python -m pytest test -m nodes --ignore "$demo_test" -q -p no:cacheprovider "$@"
status=$?
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
# what is left of the niced tests finishes beside Kilted's
wait "$niced" || status=1
echo "--- $demo_test, then the tests that start no node (niced beside the node tests)"
cat "$niced_log"
exit $status
