#!/usr/bin/env bash
# Build interfaces/control_msgs into a pip-wheel ROS 2 environment that has no control_msgs.
#
#     bash scripts/build_interfaces.sh VENV
#
# Does nothing when `control_msgs` already imports with its type support (a ROS install, or
# a venv built before), so re-runs cost one Python start. Otherwise:
#   1. cmake and a C/C++ compiler must be present (installed with apt-get when missing and
#      running as root);
#   2. the ament/rosidl wheels of requirements/build.txt export CMake targets that name the
#      Python of the machine they were built on (/opt/python/cp3XX-cp3XX/...): those paths
#      are rewritten to this interpreter's include directory and numpy's;
#   3. colcon builds the package and installs it merged into VENV (site-packages, lib/,
#      share/ and the ament index), where scripts/ros_env.sh already points every path.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$(cd "${1:?usage: build_interfaces.sh VENV}" && pwd)"
python="$venv/bin/python"

have_control_msgs() {
    # type support loads only with LD_LIBRARY_PATH etc. set: run under ros_env.sh
    (source "$repo/scripts/ros_env.sh" "$venv" >/dev/null 2>&1 && "$python" - <<'EOF' 2>/dev/null
from rclpy.type_support import check_for_type_support
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
check_for_type_support(FollowJointTrajectory)
check_for_type_support(JointTrajectoryControllerState)
EOF
    )
}

if have_control_msgs; then
    exit 0
fi

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v cc >/dev/null || command -v gcc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || command -v g++ >/dev/null || missing+=(g++)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "build_interfaces: ${missing[*]} missing; install them (apt-get install cmake g++)" >&2
        exit 1
    fi
    # one apt-get at a time: scripts/test.sh builds two environments at once
    (
        flock 9
        if ! command -v cmake >/dev/null \
                || ! { command -v c++ >/dev/null || command -v g++ >/dev/null; }; then
            echo "build_interfaces: installing ${missing[*]} with apt-get"
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                cmake gcc g++ >/dev/null
        fi
    ) 9>"${TMPDIR:-/tmp}/rbd_control_apt.lock" || exit 1
fi

echo "build_interfaces: control_msgs is missing; building interfaces/control_msgs into $venv (~30-90 s)"
# BUILD_REQUIREMENTS: the toolchain of another distribution (requirements/kilted-build.txt)
bash "$repo/scripts/install_into.sh" "$venv" -r "${BUILD_REQUIREMENTS:-$repo/requirements/build.txt}"

# Repoint the wheels' exported include paths to this interpreter (idempotent: once rewritten,
# the pattern no longer matches). Each changed file is replaced, not written in place: an
# installer may have hard-linked it to its cache (uv does unless told to copy), and an edit
# in place would change every later venv's copy to this one's paths.
"$python" - "$venv" <<'EOF'
import pathlib, re, sys, sysconfig
import numpy
venv = pathlib.Path(sys.argv[1])
python_include = sysconfig.get_paths()["include"]
build_python = r"/opt/python/cp3\d+-cp3\d+"
rules = [
    (re.compile(build_python + r"/lib/python3\.\d+/site-packages/numpy/(?:_core|core)/include"),
     numpy.get_include()),
    (re.compile(build_python + r"/include/python3\.\d+"), python_include),
]
changed = 0
for path in (venv / "share").glob("*/cmake/*.cmake"):
    text = path.read_text()
    new = text
    for pattern, replacement in rules:
        new = pattern.sub(lambda _m, r=replacement: r, new)
    if new != text:
        fresh = path.with_name(path.name + ".rbd_tmp")
        fresh.write_text(new)
        fresh.replace(path)
        changed += 1
print(f"build_interfaces: repointed {changed} CMake export files to {python_include}")
EOF

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$repo/scripts/ros_env.sh" "$venv"
export CMAKE_PREFIX_PATH="$venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export PATH="$venv/bin:$PATH"
(cd "$work" && "$venv/bin/colcon" --log-base "$work/log" build \
    --base-paths "$repo/interfaces/control_msgs" --packages-select control_msgs \
    --build-base "$work/build" --install-base "$venv" --merge-install \
    --event-handlers console_cohesion- summary+ status- \
    --cmake-args -DBUILD_TESTING=OFF "-DPython3_EXECUTABLE=$python" "-DPYTHON_EXECUTABLE=$python") \
    || { echo "build_interfaces: colcon build of control_msgs failed (log above)" >&2; exit 1; }

if ! have_control_msgs; then
    echo "build_interfaces: control_msgs was built but does not import from $venv" >&2
    exit 1
fi
echo "build_interfaces: control_msgs installed into $venv"
