#!/usr/bin/env bash
# The ROS-facing tests on ROS 2 Kilted (rclpy 9.1) as well: the nodes, the action server, the
# simulator in the loop, Ctrl-C and prompt parameter services. scripts/test.sh runs this after
# the Jazzy suite (RBD_KILTED=0 skips it).
#   KILTED_VENV   where the Kilted environment lives (default: .venv-kilted in the repo)
#   PYTHON        the interpreter to build it from (default: python3.11: Kilted's wheels are cp311)
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${KILTED_VENV:-$repo/.venv-kilted}"
python="${PYTHON:-python3.11}"

# The tests that touch rclpy through the nodes; everything below ros/ imports no rclpy and
# runs the same on both distributions (test/test_layout.py enforces that). The action server
# is test_follow_joint_trajectory (control_msgs built below); the node without control_msgs
# and the 1 kHz throughput test (a measurement, not an API) stay Jazzy-only, for time.
KILTED_TESTS=(
    test/ros/test_signals.py
    test/sim/test_prompt_services.py
    test/ros/test_controller_node.py
    test/sim/test_in_the_loop.py
    test/sim/test_follow_joint_trajectory.py
    --deselect
    test/ros/test_controller_node.py::test_every_state_of_a_1khz_stream_from_another_process_is_answered_or_coalesced
)

if [ ! -x "$venv/bin/python" ]; then
    echo "test_kilted: creating $venv with $($python --version)"
    "$python" -m venv "$venv" || exit 1
    "$venv/bin/python" -m pip install -q --upgrade pip || exit 1
fi
echo "test_kilted: installing requirements/kilted.txt and rbd_control"
"$venv/bin/python" -m pip install -q -r "$repo/requirements/kilted.txt" \
    pytest pin mujoco example-robot-data || exit 1
"$venv/bin/python" -m pip install -q "$repo[sim]" || exit 1
BUILD_REQUIREMENTS="$repo/requirements/kilted-build.txt" \
    bash "$repo/scripts/build_interfaces.sh" "$venv" || exit 1
# shellcheck disable=SC1091
source "$venv/bin/activate"
source "$repo/scripts/ros_env.sh" "$venv" || exit 1
# the same numba and numpy as the Jazzy venv reuse the kernels setup_env.sh compiled
(cd "$repo" && python -c "import rbd_control.dynamics, rbd_control.dynamics.regressor; from rbd_control.dynamics.spatial import compile_all; compile_all()") || exit 1
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$((RANDOM % 100 + 100))}"
cd "$repo" && python -m pytest "${KILTED_TESTS[@]}" -q -p no:cacheprovider "$@"
