#!/usr/bin/env bash
# The main job on a fresh machine: the default arm in MuJoCo under rbd_controller, through ROS 2
# topics: gravity compensation, then one trajectory in computed_torque and feedforward_pd.
# Prints a summary table and writes PNG plots to demo_output/.
set -uo pipefail
source "$(dirname "$0")/setup_env.sh" || exit 1
python -m rbd_control.demo "$@"
