"""Mode joint_impedance through the nodes, in lock step: rbd_controller follows targets
streamed on ~/target_joint_state at 10 Hz of sim time (0.2 rad steps on the elbow) with a
stiffness sent on ~/target_joint_stiffness, every command step within the torque rate, and a
target naming an unknown joint is refused with its reason in the log while the arm holds.
The core's figures (stiffness, damping, shaping) are test/control/test_joint_impedance.py's."""
from __future__ import annotations

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.description import default_arm_urdf

from test_in_the_loop import (ARM_JOINTS, controller_parameters, positions, sim_parameters,
                              stamp_of, start_loop, wait_for_commands)

HOME = np.array([0.0, -0.6, 1.2, 0.0, 0.8, 0.0])
ELBOW = ARM_JOINTS.index("elbow")
STIFFNESS = 300.0          # N m/rad on the elbow: below its bound at the declared 1 ms loop
RATE = 20000.0             # N m/s: limits.torque_rate's default
WALL_TIMEOUT = 120.0


def test_streamed_joint_targets_are_followed_and_bad_ones_refused(ros_node, spawn_node):
    urdf = default_arm_urdf()
    states = ros_node.collect(JointState, "/joint_states", 20000)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 20000)
    node = ros_node.node
    target = node.create_publisher(JointState, "/rbd_controller/target_joint_state", 10)
    stiffness = node.create_publisher(JointState, "/rbd_controller/target_joint_stiffness", 10)
    sim, controller = start_loop(
        ros_node, spawn_node, states, sim_parameters(urdf, ARM_JOINTS, HOME, lockstep=True),
        controller_parameters(urdf, ARM_JOINTS, "joint_impedance", use_sim_time=True,
                              state_timeout=1.0, expected_state_period=0.001,
                              expected_delay=0.002))
    wait_for_commands(ros_node, commands, 20, [sim, controller])
    ros_node.wait_for_subscribers(target)
    ros_node.wait_for_subscribers(stiffness)
    stiffness.publish(JointState(name=["elbow"], position=[STIFFNESS]))
    start, sent = stamp_of(states[-1]), []

    def stream():
        now = stamp_of(states[-1])
        if len(sent) < 10 and now >= start + 0.1 * len(sent):
            goal = HOME[ELBOW] + 0.2 * (len(sent) % 3)
            target.publish(JointState(name=["elbow"], position=[goal]))
            sent.append(goal)
        return now >= start + 2.0
    ros_node.wait_for(stream, WALL_TIMEOUT, "2 s of sim time of streamed targets")
    reached = positions(states[-1], ARM_JOINTS)
    steps = np.abs(np.diff(np.array([c.data for c in commands[-1500:]]), axis=0)).max()
    target.publish(JointState(name=["elbow", "no_such_joint"], position=[1.0, 0.0]))
    ros_node.wait_for(lambda: stamp_of(states[-1]) >= start + 2.5, WALL_TIMEOUT,
                      "0.5 s more of sim time")
    held = positions(states[-1], ARM_JOINTS)
    ros_node.spin_for(1.2)      # a log period
    assert sim.alive() and controller.alive(), controller.log()
    print(f"{len(sent)} targets: elbow at {reached[ELBOW]:.4f} rad for {sent[-1]:.4f}, largest "
          f"command step {steps:.2f} N m; after the bad target {held[ELBOW]:.4f}")
    assert abs(reached[ELBOW] - sent[-1]) < 5e-3, controller.log()[-3000:]
    assert steps <= RATE * 0.002 + 1e-9
    assert abs(held[ELBOW] - sent[-1]) < 5e-3
    assert "joint target refused" in controller.log() and "no_such_joint" in controller.log()
