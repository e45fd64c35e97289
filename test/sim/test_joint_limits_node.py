"""A joint pushed toward its limit, through the nodes: rbd_mujoco_sim's ~/joint_disturbance
pushes shoulder_lift up by 5x its gravity torque at the pose test/control/test_command_limits.py
pushes it from (56 N m against the joint's 150 N m effort limit) while rbd_controller holds the
arm in gravity_compensation with limits.joint_limits on. The joint stops inside the soft limit's
margin and never reaches its hard limit (the bounds of control/safety/joint_limits.py), and
/diagnostics names the joint and the limit. In lock step and in real time.

The controller declares the loop it runs in (a state every 1 ms, its command applied within
2 ms): the wall's stiffness and brake are the fastest stable loop for what is declared
(model/plan.py's limit_gains), and the default declaration (4 ms, 10 ms) gives a wall 5x softer
that this push carries past the hard limit (doc/concepts/safety_and_loop.md says how much each
declaration holds)."""
from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import gravity, load_urdf
from rbd_control.ros.conversions import joint_trajectory_msg

from test_in_the_loop import (ARM_JOINTS, SIM_NODE, controller_parameters, positions,
                              sim_parameters, stamp_of, start_loop, wait_for_commands)

JOINT = "shoulder_lift"
HOME = np.array([0.0, -0.6, 1.2, 0.0, 0.8, 0.0])   # test_command_limits.py's
SOFT_MARGIN = 0.15         # rad: limits.soft_margin's default (no <safety_controller> here)
DECLARED_LOOP = {"expected_state_period": 0.001, "expected_delay": 0.002}
PUSH_S = 3.0               # s of sim time under the push
WALL_TIMEOUT = 120.0


def start_limited(ros_node, spawn_node, urdf, mode, publisher, *, lockstep):
    """(the states seen, the simulator, the controller) of a loop at HOME in `mode` with the
    joint limits on and the loop declared, once it commands and `publisher` is matched."""
    states = ros_node.collect(JointState, "/joint_states", 20000)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 100)
    sim, controller = start_loop(
        ros_node, spawn_node, states, sim_parameters(urdf, ARM_JOINTS, HOME, lockstep=lockstep),
        controller_parameters(urdf, ARM_JOINTS, mode, use_sim_time=True,
                              **{"limits.joint_limits": True, "state_timeout": 1.0},
                              **DECLARED_LOOP))
    wait_for_commands(ros_node, commands, 20, [sim, controller])
    ros_node.wait_for_subscribers(publisher)
    return states, sim, controller


def pushed(ros_node, spawn_node, *, lockstep):
    """(peak position of JOINT under the push, its hard upper limit, the limits statuses)."""
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    index = model.joint_names.index(JOINT)
    hard = float(model.position_limits[index, 1])
    push = 5.0 * abs(gravity(model, HOME)[index])
    statuses = ros_node.collect(DiagnosticArray, "/diagnostics", 200)
    disturbance = ros_node.node.create_publisher(JointState, f"/{SIM_NODE}/joint_disturbance",
                                                 10)
    states, sim, controller = start_limited(ros_node, spawn_node, urdf, "gravity_compensation",
                                            disturbance, lockstep=lockstep)
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


def test_a_pushed_joint_stops_inside_its_soft_limit_in_lock_step(ros_node, spawn_node):
    check(*pushed(ros_node, spawn_node, lockstep=True))


@pytest.mark.wall_clock
def test_a_pushed_joint_stops_inside_its_soft_limit_in_real_time(ros_node, spawn_node):
    check(*pushed(ros_node, spawn_node, lockstep=False))


def test_a_goal_beyond_the_soft_limit_sent_by_topic_is_refused_or_stopped(ros_node,
                                                                          spawn_node):
    """feedforward_pd with limits.joint_limits on, goals for JOINT sent on ~/joint_trajectory:
    0.2 rad beyond the soft limit lies beyond the hard one and is refused with its reason in
    the log (the arm holds); 0.1 rad beyond is accepted, and the bounds stop the joint inside
    the margin, never at the stop."""
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    index = model.joint_names.index(JOINT)
    hard = float(model.position_limits[index, 1])
    soft = hard - SOFT_MARGIN
    goals = ros_node.node.create_publisher(JointTrajectory, "/rbd_controller/joint_trajectory",
                                           10)
    states, sim, controller = start_limited(ros_node, spawn_node, urdf, "feedforward_pd", goals,
                                            lockstep=True)
    peaks = {}
    for beyond in (0.2, 0.1):
        goal = HOME.copy()
        goal[index] = soft + beyond
        start = stamp_of(states[-1])
        goals.publish(joint_trajectory_msg(ARM_JOINTS, [(2.0, goal, None, None)]))
        ros_node.wait_for(lambda: stamp_of(states[-1]) >= start + 3.0, WALL_TIMEOUT,
                          "3 s of sim time after the goal")
        peaks[beyond] = max(positions(s, [JOINT])[0] for s in states if stamp_of(s) >= start)
    assert sim.alive() and controller.alive(), controller.log()
    print(f"goal {soft + 0.2:.2f} rad: peak {peaks[0.2]:.4f} (HOME {HOME[index]}); goal "
          f"{soft + 0.1:.2f} rad: peak {peaks[0.1]:.4f}, soft {soft:.2f}, hard {hard}")
    assert "outside its limits" in controller.log()
    assert abs(peaks[0.2] - HOME[index]) < 1e-3            # refused: the arm held
    assert soft - 0.05 < peaks[0.1] < hard
