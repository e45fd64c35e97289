#!/usr/bin/env bash
# Source me: creates (once) and activates a virtual environment with everything the tests and
# the demo need, from the package registries only, then sets up the ROS 2 wheels' environment.
#   VENV     where the environment lives (default: .venv in the repo)
#   PYTHON   the interpreter to build it from (default: python3; 3.10 to 3.12)
_rbd_setup() {
    local repo venv python
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="${VENV:-$repo/.venv}"
    python="${PYTHON:-python3}"
    bash "$repo/scripts/make_venv.sh" "$venv" "$python" || return 1
    echo "setup: installing requirements (ROS 2 Jazzy wheels, colcon, oracles) and rbd_control"
    # Not editable: a normal install is what puts launch/, config/, urdf/ and the ament
    # index marker into share/rbd_control, which the nodes and tests look up.
    bash "$repo/scripts/install_into.sh" "$venv" -r "$repo/requirements/ros.txt" \
        -r "$repo/requirements/build.txt" -r "$repo/requirements/test.txt" \
        -r "$repo/requirements/docs.txt" "$repo[sim,demo]" || return 1
    # shellcheck disable=SC1091
    source "$venv/bin/activate"
    source "$repo/scripts/ros_env.sh" "$venv" || return 1
    # control_msgs (FollowJointTrajectory, JointTrajectoryControllerState) has no wheel: build
    # the interfaces/ subset into the venv once (skipped when it imports, as on a ROS install),
    # beside the kernel compile below, which needs no control_msgs (the build's configure
    # steps leave a core idle).
    local interfaces_log interfaces
    interfaces_log="$(mktemp)"
    bash "$repo/scripts/build_interfaces.sh" "$venv" >"$interfaces_log" 2>&1 &
    interfaces=$!
    # Compile the numba kernels once, in the checkout (pytest imports it), and seed the
    # installed copy (the nodes' console scripts) with them: numba accepts a cached kernel
    # whose source bytes match, so the second copy loads instead of compiling again. A node
    # that had to compile at start-up would look dead to a test waiting on it.
    # One compiling process per core (at most 4): each kernel compiles on one core.
    local cores compiled=0 built=0
    cores="$(nproc 2>/dev/null || echo 1)"
    [ "$cores" -gt 4 ] && cores=4
    echo "setup: compiling the dynamics kernels on $cores cores (cached after the first time)"
    (cd "$repo" && "$venv/bin/python" -c "from rbd_control.dynamics import compile_kernels; compile_kernels($cores)") \
        && compiled=1
    wait "$interfaces" && built=1
    cat "$interfaces_log"
    rm -f "$interfaces_log"
    [ $compiled = 1 ] && [ $built = 1 ] || return 1
    "$venv/bin/python" "$repo/scripts/seed_kernel_cache.py" "$repo/rbd_control" \
        "$(cd / && "$venv/bin/python" -c 'import os, rbd_control; print(os.path.dirname(rbd_control.__file__))')" \
        || return 1
    (cd / && "$venv/bin/python" -c "from rbd_control.dynamics import compile_kernels; compile_kernels()") || return 1
    # A random domain per session keeps parallel runs and other users' nodes apart.
    export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$((RANDOM % 100 + 100))}"
    cd "$repo"
}
_rbd_setup
