#!/usr/bin/env bash
# The main job on a fresh machine: the default arm in MuJoCo under rbd_controller, through ROS 2
# topics: gravity compensation, one trajectory in computed_torque and feedforward_pd, a Cartesian
# push, a collision with a box (MuJoCo only), then identification of a perturbed arm. Prints a summary table and writes PNG plots to
# demo_output/. Options: python -m rbd_control.demo --help (--realtime, --sim dart, ...).
set -uo pipefail
source "$(dirname "$0")/setup_env.sh" || exit 1
python -m rbd_control.demo "$@"
