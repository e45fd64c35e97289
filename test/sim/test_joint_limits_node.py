"""A joint pushed toward its limit, through the nodes: rbd_mujoco_sim's ~/joint_disturbance
pushes shoulder_lift up by 5x its gravity torque at home while rbd_controller holds the arm in
gravity_compensation with limits.joint_limits on. The joint stops inside the soft limit's
margin and never reaches its hard limit (the bounds of control/safety/joint_limits.py, as
ros2_control's JointSoftLimiter computes them), and /diagnostics names the joint and the limit.

NOT YET TRUE at the default arm's home pose, where 5x gravity is 87.5 N m against the joint's
150 N m effort limit: the joint reaches the soft limit (2.05 rad) at up to ~3 rad/s (the effort
bound -k_velocity (qd - v_allowed) with k_velocity = effort / velocity lets the push hold it
above its 2 rad/s limit) and the 62 N m left to brake need more than the 0.15 rad margin:
peak 2.2108 rad in lock step, 2.211-2.218 rad in four real-time runs, hard limit 2.2. The
core's case (test/control/test_command_limits.py, a pose with 11 N m of gravity) stops at
2.182. Strict xfail: it fails the suite the day the bounds hold it, to be made a plain test.
A real-time variant is left out until then (one real-time run of five reached 179 rad, not
reproduced since)."""
from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import gravity, load_urdf

from test_in_the_loop import (ARM_JOINTS, SIM_NODE, controller_parameters, positions,
                              sim_parameters, stamp_of, start_loop, wait_for_commands)

JOINT = "shoulder_lift"
SOFT_MARGIN = 0.15         # rad: limits.soft_margin's default (no <safety_controller> here)
PUSH_S = 3.0               # s of sim time under the push
WALL_TIMEOUT = 120.0


def pushed(ros_node, spawn_node, *, lockstep):
    """(peak position of JOINT under the push, its hard upper limit, the limits statuses)."""
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    home = np.array([DEFAULT_ARM_HOME[j] for j in ARM_JOINTS])
    index = model.joint_names.index(JOINT)
    hard = float(model.position_limits[index, 1])
    push = 5.0 * abs(gravity(model, home)[index])
    states = ros_node.collect(JointState, "/joint_states", 20000)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 100)
    statuses = ros_node.collect(DiagnosticArray, "/diagnostics", 200)
    disturbance = ros_node.node.create_publisher(JointState, f"/{SIM_NODE}/joint_disturbance",
                                                 10)
    sim, controller = start_loop(
        ros_node, spawn_node, states, sim_parameters(urdf, ARM_JOINTS, home, lockstep=lockstep),
        controller_parameters(urdf, ARM_JOINTS, "gravity_compensation", use_sim_time=True,
                              **{"limits.joint_limits": True, "state_timeout": 1.0}))
    wait_for_commands(ros_node, commands, 20, [sim, controller])
    ros_node.wait_for_subscribers(disturbance)
    start = stamp_of(states[-1])
    disturbance.publish(JointState(name=[JOINT], effort=[push]))
    ros_node.wait_for(lambda: stamp_of(states[-1]) >= start + PUSH_S, WALL_TIMEOUT,
                      f"{PUSH_S} s of sim time under the push")
    ros_node.spin_for(1.5)     # a /diagnostics period
    disturbance.publish(JointState())
    assert sim.alive() and controller.alive(), controller.log()
    peak = max(positions(s, [JOINT])[0] for s in states if stamp_of(s) >= start)
    limits = [s for array in statuses for s in array.status if s.name.endswith(": limits")]
    print(f"{'lock step' if lockstep else 'real time'}: {JOINT} pushed by {push:.1f} N m: "
          f"peak {peak:.4f} rad, soft {hard - SOFT_MARGIN:.3f}, hard {hard:.3f}")
    return peak, hard, limits, f"{controller.log()[-3000:]}\n{sim.log()[-2000:]}"


def check(peak, hard, limits, logs):
    assert peak < hard, f"{JOINT} reached {peak:.4f} rad, its hard limit is {hard}:\n{logs}"
    assert peak > hard - SOFT_MARGIN - 0.05, "the limit, not the push, must have stopped it"
    warned = [s for s in limits if s.level == DiagnosticStatus.WARN]
    assert any(f"{JOINT} position" in s.message for s in warned), \
        [(s.level, s.message) for s in limits]


@pytest.mark.xfail(strict=True, reason="the soft-limit bounds let 5x gravity at home carry "
                   "shoulder_lift 11 mrad past its hard limit (module doc)")
def test_a_pushed_joint_stops_inside_its_soft_limit_in_lock_step(ros_node, spawn_node):
    check(*pushed(ros_node, spawn_node, lockstep=True))
