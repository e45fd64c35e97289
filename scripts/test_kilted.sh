#!/usr/bin/env bash
# The ROS-facing tests on ROS 2 Kilted (rclpy 9.1) as well: the nodes, the action server, the
# simulator in the loop, Ctrl-C and prompt parameter services. scripts/test.sh runs this in two
# parts, as it runs Jazzy's node tests (RBD_KILTED=0 skips it).
#   KILTED_VENV   where the Kilted environment lives (default: .venv-kilted in the repo)
#   PYTHON        the interpreter to build it from (default: python3.11: Kilted's wheels are cp311)
#   --prepare     only build the environment, rbd_control aside (scripts/test.sh runs this
#                 beside the Jazzy set-up, and the tests later)
#   KILTED_PREPARED=1  the environment is built: skip the installs
#   KILTED_INSTALLED=1 rbd_control is installed too (a second run of the same checkout)
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${KILTED_VENV:-$repo/.venv-kilted}"
python="${PYTHON:-python3.11}"

# The tests that touch rclpy through the nodes; everything below ros/ imports no rclpy and
# runs the same on both distributions (test/test_layout.py enforces that). The action server
# is test_follow_joint_trajectory (control_msgs built below); the node without control_msgs,
# the 1 kHz throughput test (a measurement, not an API) and the in-the-loop hold, tracking,
# watchdog and simulator restart (the same arithmetic on either rclpy; the action tests close
# the loop on Kilted, and its stale-states case below runs the watchdog's steady timer) stay
# Jazzy-only, for time. So do the test_controller_node.py cases that reach no rclpy surface
# its other cases do not (each starts a node, ~5 s): of the refused parameter values one
# number and one read-only descriptor are kept, the other five refusals are the core's
# checks; one startup mode and one safe action of two; the joint selection (adopt, refuse,
# default order), the gravity override and the non-finite states are the controller's logic
# behind the same subscription and parameter callbacks.
controller_node=test/ros/test_controller_node.py
KILTED_TESTS=(
    test/ros/test_signals.py
    test/sim/test_prompt_services.py
    "$controller_node"
    test/sim/test_in_the_loop.py
    test/sim/test_follow_joint_trajectory.py
)
for deselected in \
    "$controller_node::test_every_state_of_a_1khz_stream_from_another_process_is_answered_or_coalesced" \
    "$controller_node::test_invalid_parameter_is_refused_with_a_reason[gains.shoulder_pan.d-nan-gains.shoulder_pan.d]" \
    "$controller_node::test_invalid_parameter_is_refused_with_a_reason[mode-impedance-unknown mode]" \
    "$controller_node::test_invalid_parameter_is_refused_with_a_reason[gravity-value3-gravity needs 3 values]" \
    "$controller_node::test_invalid_parameter_is_refused_with_a_reason[robot_description-<robot name=\"broken\"><link-robot_description]" \
    "$controller_node::test_invalid_parameter_is_refused_with_a_reason[joints-value6-read-only]" \
    "$controller_node::test_startup_parameters_reach_the_core[gravity_compensation-parameters1]" \
    "$controller_node::test_stale_joint_states_trigger_the_safe_action_within_state_timeout[zero]" \
    "$controller_node::test_without_joints_parameter_all_urdf_joints_are_controlled_in_urdf_order" \
    "$controller_node::test_runtime_gravity_override_changes_the_torque" \
    "$controller_node::test_non_finite_and_malformed_states_never_produce_non_finite_commands" \
    "$controller_node::test_a_robot_with_other_joints_is_adopted_when_joints_is_not_set" \
    "$controller_node::test_a_robot_without_the_configured_joints_is_refused" \
    test/sim/test_in_the_loop.py::test_gravity_compensation_holds_the_arm_for_5_s_of_sim_time \
    test/sim/test_in_the_loop.py::test_computed_torque_tracks_a_trajectory_through_the_workspace \
    test/sim/test_in_the_loop.py::test_watchdog_engages_when_the_simulator_stops \
    test/sim/test_in_the_loop.py::test_controller_recovers_when_the_simulator_restarts; do
    KILTED_TESTS+=(--deselect "$deselected")
done

if [ "${KILTED_PREPARED:-0}" != 1 ]; then
    bash "$repo/scripts/make_venv.sh" "$venv" "$python" || exit 1
    echo "test_kilted: installing requirements/kilted.txt"
    bash "$repo/scripts/install_into.sh" "$venv" -r "$repo/requirements/kilted.txt" \
        pytest pin mujoco example-robot-data || exit 1
    BUILD_REQUIREMENTS="$repo/requirements/kilted-build.txt" \
        bash "$repo/scripts/build_interfaces.sh" "$venv" || exit 1
fi
[ "${1:-}" = --prepare ] && exit 0
# rbd_control itself not while preparing: pip builds it in the checkout, as the Jazzy set-up
# may be doing at the same time
if [ "${KILTED_INSTALLED:-0}" != 1 ]; then
    echo "test_kilted: installing rbd_control"
    bash "$repo/scripts/install_into.sh" "$venv" "$repo[sim]" || exit 1
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
source "$repo/scripts/ros_env.sh" "$venv" || exit 1
# the same numba and numpy as the Jazzy venv reuse the kernels setup_env.sh compiled
if [ "${KILTED_INSTALLED:-0}" != 1 ]; then
    (cd "$repo" && python -c "from rbd_control.dynamics import compile_kernels; compile_kernels()") || exit 1
fi
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$((RANDOM % 100 + 100))}"
cd "$repo" && python -m pytest "${KILTED_TESTS[@]}" -q -p no:cacheprovider "$@"
