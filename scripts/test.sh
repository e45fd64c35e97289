#!/usr/bin/env bash
# The test suite on a fresh machine: set up the environment, then run every test on ROS 2
# Jazzy, and the ROS-facing ones on Kilted too (scripts/test_kilted.sh; RBD_KILTED=0 skips).
# Extra arguments go to every pytest run.
#
# Two lanes side by side, one per core, then the wall-clock tests on a quiet machine:
#   lane 1: Jazzy's test/sim node tests, Kilted's node tests, Jazzy's test_controller_node.py
#   lane 2: the demo test (lock step: it waits for nothing in real time), the identification
#           tests that start nodes, Jazzy's other test/ros node tests
#   then:   the tests marked wall_clock (setup.cfg: plants in real time, command gaps, reply
#           deadlines, shutdown times), Jazzy's then Kilted's
#   beside: the tests that start no node (test/sim's plant tests too), at the lowest
#           priority (nice 19), in two processes, beside Jazzy's wall-clock tests but
#           test_hostile_node.py's (huge messages and descriptions: it runs first, alone;
#           with them beside it, 2 of 4 runs failed): they use the CPU the wall-clock tests
#           leave (those use ~1.1 of 2 cores), and yield it to any process that wants it;
#           Kilted's wall-clock tests wait for them
# The node tests in the lanes wait on their nodes (with generous timeouts) and measure no time.
# Each lane has its own part of the ROS domain range (RBD_TEST_DOMAINS, test/ros/conftest.py),
# so that two tests running at once never share a domain.
set -uo pipefail
here="$(dirname "$0")"
stamp() { echo "--- $(date +%T) $*"; }
# Kilted gets the environment as it was before Jazzy's (library paths, ament prefixes)
clean=(env -i HOME="$HOME" PATH="$PATH" TERM="${TERM:-dumb}")
kilted=${RBD_KILTED:-1}
if [ "$kilted" != 0 ]; then
    # Kilted's environment builds beside Jazzy's set-up, at nice 10 so that it takes what
    # that leaves idle (lane 1 needs it only after Jazzy's test/sim); its log is shown before
    # Kilted's tests
    kilted_log="$(mktemp)"
    nice -n 10 "${clean[@]}" bash "$here/test_kilted.sh" --prepare >"$kilted_log" 2>&1 &
    kilted_prepare=$!
fi
stamp "set-up"
source "$here/setup_env.sh" || exit 1
pytest_q=(python -m pytest -q -p no:cacheprovider)
demo_test=test/sim/test_bringup_and_demo.py
lane1_file=test/ros/test_controller_node.py
status=0

# The tests that start no node, in two halves run side by side (below), of about the same
# length (2026-12-06: 2.5 and 7.7 min before test/identification moved to the first): the
# dynamics, the descriptions, the docs, test/sim's plant tests (a new test/sim file runs in
# lane 1) and the identification's; everything else
sim_no_node=(test/sim/test_any_robot_holds.py test/sim/test_dart_plant.py
             test/sim/test_mujoco_model.py test/sim/test_plant_mutations.py
             test/sim/test_simulator.py)
starts_nodes=(test/identification/test_bringup_excite.py test/identification/test_node_corrections.py
              test/identification/test_excite_plan_error.py)
no_node_a=(test/dynamics test/description test/test_docs.py "${sim_no_node[@]}"
           test/identification)
for file in "${starts_nodes[@]}"; do no_node_a+=(--ignore="$file"); done
no_node_b=(test --ignore=test/ros --ignore=test/sim --ignore=test/dynamics
           --ignore=test/description --ignore=test/test_docs.py --ignore=test/identification)
sim_nodes=(test/sim --ignore "$demo_test")
for file in "${sim_no_node[@]}"; do sim_nodes+=(--ignore "$file"); done

stamp "lane 2 starts (its log follows lane 1's): $demo_test, then node tests"
lane2_log="$(mktemp)"
(
    export RBD_TEST_DOMAINS=101-166
    lane_status=0
    "${pytest_q[@]}" "$demo_test" "$@" || lane_status=1
    stamp "lane 2: the identification tests that start nodes"
    "${pytest_q[@]}" "${starts_nodes[@]}" "$@" || lane_status=1
    stamp "lane 2: Jazzy's test/ros node tests but $lane1_file and the wall-clock ones"
    "${pytest_q[@]}" test/ros --ignore "$lane1_file" -m "not wall_clock" "$@" || lane_status=1
    exit $lane_status
) >"$lane2_log" 2>&1 &
lane2=$!

export RBD_TEST_DOMAINS=167-232
stamp "lane 1: Jazzy's test/sim node tests but the wall-clock ones"
"${pytest_q[@]}" "${sim_nodes[@]}" -m "not wall_clock" "$@" || status=1
kilted_ready=0
if [ "$kilted" != 0 ]; then
    wait "$kilted_prepare" && kilted_ready=1
    cat "$kilted_log"
    if [ $kilted_ready = 0 ]; then
        echo "test_kilted: building the Kilted environment failed (above)"
        status=1
    else
        stamp "lane 1: Kilted's node tests but the wall-clock ones"
        "${clean[@]}" KILTED_PREPARED=1 RBD_TEST_DOMAINS=167-232 bash "$here/test_kilted.sh" \
            -m "not wall_clock" "$@" || status=1
    fi
fi
stamp "lane 1: Jazzy's $lane1_file but the wall-clock ones"
"${pytest_q[@]}" "$lane1_file" -m "not wall_clock" "$@" || status=1

stamp "lane 1 done; waiting for lane 2"
wait "$lane2" || status=1
cat "$lane2_log"

export RBD_TEST_DOMAINS=101-166
hostile=test/ros/test_hostile_node.py
# the disk quiet too: what the lanes wrote is flushed now, not while a loop is timed (beside
# a disk writer, dd with fsync, the hostile test saw command gaps of 0.25-0.4 s)
sync
stamp "wall clock: Jazzy's $hostile, alone"
"${pytest_q[@]}" "$hostile" -m wall_clock "$@" || status=1
stamp "wall clock: Jazzy's other wall-clock tests; beside them the tests that start no node, at nice 19"
no_node_log="$(mktemp)"
(
    # two processes: one left a third of a core idle beside the wall-clock tests and ran
    # on into Kilted's
    export RBD_TEST_DOMAINS=167-232
    nice -n 19 "${pytest_q[@]}" "${no_node_a[@]}" "$@" &
    half_a=$!
    half_status=0
    nice -n 19 "${pytest_q[@]}" "${no_node_b[@]}" "$@" || half_status=1
    wait $half_a || half_status=1
    exit $half_status
) >"$no_node_log" 2>&1 &
no_node_run=$!
"${pytest_q[@]}" test/ros test/sim --ignore "$demo_test" --ignore "$hostile" -m wall_clock "$@" \
    || status=1
# Kilted's on a quiet machine: its Ctrl-C test starts two rbd_bringup loops at once, which a
# busy machine slowed past the 2 s shutdown bound once (5.2 s)
stamp "waiting for the tests that start no node (their log follows)"
wait "$no_node_run" || status=1
cat "$no_node_log"
if [ $kilted_ready = 1 ]; then
    stamp "wall clock: Kilted's wall-clock tests"
    "${clean[@]}" KILTED_PREPARED=1 KILTED_INSTALLED=1 RBD_TEST_DOMAINS=101-166 \
        bash "$here/test_kilted.sh" -m wall_clock "$@" || status=1
fi
stamp "done (status $status)"
exit $status
