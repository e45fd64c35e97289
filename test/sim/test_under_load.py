"""The real-time loop on a busy machine: rbd_mujoco_sim and rbd_controller in their own
processes while one busy-loop process is pinned to each of the first two CPUs for the whole
test, the simulator restarted in the middle (a robot's computer is rarely idle).

The arm must stay held and every effort finite and within the URDF limits. The restarted
simulator starts 5 mrad away from the pose the controller holds, so a loop that lost its
stability margin to the load would be excited, and would show.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from test_in_the_loop import (ARM_JOINTS, SIM, SIM_NODE, STARTUP_S, controller_parameters,
                              positions, sim_parameters, stamp_of, start_loop, wait_for_commands)

pytestmark = pytest.mark.wall_clock   # setup.cfg: nothing else at normal priority beside them

HELD = 1e-2         # rad
OFFSET = 5e-3       # rad: the restarted simulator's start pose minus the held one


@pytest.fixture
def busy_cpus():
    """One busy-loop process pinned to each of the first two CPUs, killed afterwards."""
    spin = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
    processes = [subprocess.Popen([sys.executable, "-c", spin, str(cpu)])
                 for cpu in range(min(2, os.cpu_count()))]
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def check_held(states, commands, home, limit, what):
    assert len(states) > 100, f"{what}: only {len(states)} states seen"
    drift = np.max([np.abs(positions(s, ARM_JOINTS) - home) for s in states], axis=0)
    assert drift.max() < HELD, f"{what}: the arm is not held, drift per joint [rad] {drift}"
    efforts = np.array([c.data for c in commands])
    assert len(efforts) > 100 and np.all(np.isfinite(efforts)), f"{what}: non-finite effort"
    assert np.all(np.abs(efforts) <= limit), f"{what}: effort beyond the URDF limits"
    return drift.max()


def test_real_time_loop_holds_the_arm_under_load_and_across_a_simulator_restart(
        ros_node, spawn_node, busy_cpus):
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    limit = np.array([model.effort_limit[model.joint_names.index(j)] for j in ARM_JOINTS])
    home = np.array([DEFAULT_ARM_HOME[j] for j in ARM_JOINTS])
    states = ros_node.collect(JointState, "/joint_states", 1000)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 1000)
    # on wall time, as on hardware: the controller measures how late each state is from
    # when it was published (max_state_age; its stamps are the simulator's sim time)
    controller_params = controller_parameters(urdf, ARM_JOINTS, "feedforward_pd",
                                              use_sim_time=False)
    first, controller = start_loop(
        ros_node, spawn_node, states, sim_parameters(urdf, ARM_JOINTS, home, lockstep=False),
        controller_params)
    wait_for_commands(ros_node, commands, 300, [first, controller])
    del states[:], commands[:]
    ros_node.spin_for(2.0)
    first_drift = check_held(states, commands, home, limit, "first simulator")
    held = positions(states[-1], ARM_JOINTS)

    assert first.stop() == 0, first.log()[-4000:]
    ros_node.spin_for(1.0)              # the controller's watchdog holds meanwhile
    second = spawn_node(SIM, sim_parameters(urdf, ARM_JOINTS, held + OFFSET, lockstep=False),
                        node_name=SIM_NODE)
    del states[:]
    ros_node.wait_for(lambda: any(stamp_of(s) > 0.5 for s in states), STARTUP_S,
                      "0.5 s of the restarted simulator")
    del states[:], commands[:]
    ros_node.spin_for(2.0)
    assert second.alive() and controller.alive()
    second_drift = check_held(states, commands, held, limit, "restarted simulator")
    print(f"largest excursion: {first_drift:.2e} rad before, "
          f"{second_drift:.2e} rad after the restart"
          f" (states seen {len(states)}, commands {len(commands)})")
