# Source me (bash or zsh) to enter the environment scripts/setup_env.sh (or demo.sh, test.sh)
# built: the venv activated and the ROS 2 Jazzy wheels' variables set, in a fraction of a
# second, installing nothing:
#
#     source scripts/ros_env.sh [VENV]
#
# VENV is the virtual environment holding the wheels. Without it: $RBD_VENV, then
# $VIRTUAL_ENV, then .venv/ or venv/ in the repo or next to it. It is activated unless it
# already is (its bin/ first on PATH: rbd_bringup, rbd_identify ...).
#
# Why each variable:
#   LD_LIBRARY_PATH      rclpy dlopen()s message type support libraries by bare name;
#                        the wheels put them in <venv>/lib and site-packages/ros_*.libs.
#   _ROS_WHEELS_BOOTSTRAP_COMPLETE
#                        the ros-wheels-bootstrapper .pth re-executes every Python of the
#                        venv to set LD_LIBRARY_PATH; we already set it, so skip that.
#   AMENT_PREFIX_PATH    ament_index_python (package share dirs, resources) needs it and
#                        the wheels do not set it; cmeel.prefix holds example-robot-data.
#   ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
#                        keep DDS discovery on this machine (ROS_LOCALHOST_ONLY is
#                        deprecated in Jazzy).
#   RMW_IMPLEMENTATION   Fast DDS is the only middleware the wheels ship.
#   FASTRTPS_DEFAULT_PROFILES_FILE
#                        Jazzy's Fast DDS 2.x: config/fastdds_localhost.xml (faster
#                        discovery on loopback, see there), unless already set.
# ROS_DOMAIN_ID is left alone: pick your own to avoid other people's nodes on this host.

_rbd_env_main() {
    local here repo venv candidate python site_packages prefix_lib libs_dirs
    here="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
    repo="$(dirname "$here")"

    venv="${1:-${RBD_VENV:-${VIRTUAL_ENV:-}}}"
    if [ -z "$venv" ]; then
        for candidate in "$repo/.venv" "$repo/venv" "$(dirname "$repo")/venv" "$(dirname "$repo")/.venv"; do
            if [ -x "$candidate/bin/python" ]; then venv="$candidate"; break; fi
        done
    fi
    if [ -z "$venv" ] || [ ! -x "$venv/bin/python" ]; then
        echo "ros_env.sh: no virtual environment found; pass one: source scripts/ros_env.sh /path/to/venv" >&2
        return 1
    fi
    venv="$(cd "$venv" && pwd)"
    python="$venv/bin/python"
    if [ "${VIRTUAL_ENV:-}" != "$venv" ] && [ -f "$venv/bin/activate" ]; then
        # shellcheck disable=SC1091
        source "$venv/bin/activate" || return 1
    fi

    # -S: do not run the venv's .pth files (the bootstrapper would re-exec us);
    # without site, sysconfig does not know the venv, so build the venv layout by hand.
    site_packages="$venv/lib/python$("$python" -S -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages" || return 1
    if [ ! -d "$site_packages/rclpy" ]; then
        echo "ros_env.sh: rclpy is not installed in $venv; run: $python -m pip install -r $repo/requirements/ros.txt" >&2
        return 1
    fi

    prefix_lib="$venv/lib"
    libs_dirs="$(find "$site_packages" -maxdepth 1 -type d -name 'ros_*.libs' | sort | tr '\n' ':')"
    export LD_LIBRARY_PATH="${prefix_lib}:${libs_dirs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

    local ament="$venv"
    if [ -d "$site_packages/cmeel.prefix/share" ]; then
        ament="$ament:$site_packages/cmeel.prefix"
    fi
    export AMENT_PREFIX_PATH="${ament}${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"

    export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
    export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
    # Fast DDS 2.x (Jazzy) without multicast matches a new node at the others' next
    # announcement, every 3 s: config/fastdds_localhost.xml announces every 0.2 s (unless
    # you have a profile of your own). Fast DDS 3 (Kilted) matches at once.
    if [ -z "${FASTRTPS_DEFAULT_PROFILES_FILE:-}" ] && [ -n "$(find "$prefix_lib" -maxdepth 1 -name 'libfastrtps.so.2*' -print -quit)" ]; then
        export FASTRTPS_DEFAULT_PROFILES_FILE="$repo/config/fastdds_localhost.xml"
    fi
    export RBD_VENV="$venv"
}

_rbd_env_main "$@"
unset -f _rbd_env_main
