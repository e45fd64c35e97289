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
# The demo (lock step: it waits for nothing in real time) runs beside the tests that start no
# node, on the other core; then the node tests (below).
demo_test=test/sim/test_bringup_and_demo.py
demo_log="$(mktemp)"
python -m pytest "$demo_test" -q -p no:cacheprovider "$@" >"$demo_log" 2>&1 &
demo=$!
python -m pytest test -q -p no:cacheprovider --ignore=test/ros --ignore=test/sim "$@"
status=$?
wait "$demo" || status=1
echo "--- $demo_test"
cat "$demo_log"
# The node tests. First those that do not watch the wall clock, in two pytest runs side by
# side (a node test keeps about one core busy: its nodes' start-up, then waiting on them), each
# on its own part of the domain range: Jazzy's, and beside it Kilted's followed by Jazzy's
# controller-node file. Then those marked wall_clock (setup.cfg: plants in real time, command
# gaps, reply deadlines), with the machine to themselves.
side_file=test/ros/test_controller_node.py
kilted_ready=0
if [ "$kilted" != 0 ]; then
    wait "$kilted_prepare" && kilted_ready=1
    cat "$kilted_log"
    if [ $kilted_ready = 0 ]; then
        echo "test_kilted: building the Kilted environment failed (above)"
        status=1
    fi
fi
side_log="$(mktemp)"
(
    side_status=0
    if [ $kilted_ready = 1 ]; then
        "${clean[@]}" KILTED_PREPARED=1 RBD_TEST_DOMAINS=167-232 bash "$here/test_kilted.sh" \
            -m "not wall_clock" "$@" || side_status=1
    fi
    echo "--- Jazzy: $side_file"
    RBD_TEST_DOMAINS=167-232 python -m pytest "$side_file" -q -p no:cacheprovider \
        -m "not wall_clock" "$@" || side_status=1
    exit $side_status
) >"$side_log" 2>&1 &
side=$!
RBD_TEST_DOMAINS=101-166 python -m pytest test/ros test/sim -q -p no:cacheprovider \
    --ignore "$demo_test" --ignore "$side_file" -m "not wall_clock" "$@" || status=1
wait "$side" || status=1
echo "--- beside it, Kilted's tests (their first part) and Jazzy's $side_file"
cat "$side_log"
echo "--- the tests that watch the wall clock, alone: Jazzy, then Kilted"
python -m pytest test/ros test/sim -q -p no:cacheprovider --ignore "$demo_test" \
    -m wall_clock "$@" || status=1
if [ $kilted_ready = 1 ]; then
    "${clean[@]}" KILTED_PREPARED=1 KILTED_INSTALLED=1 bash "$here/test_kilted.sh" \
        -m wall_clock "$@" || status=1
fi
exit $status
