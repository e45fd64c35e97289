"""rbd_controller given a real robot's URDF with dubious inertias (PR2: two head links break
the triangle inequality), in its own process, driven by real rclpy from this one.

By default the node loads it, logs each warning once, and publishes finite gravity torques
within the URDF limits, equal to the ROS-free core's; with strict_model: true it refuses the
description with the reason and publishes nothing.
"""
import importlib.util
from pathlib import Path

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.control import Controller, ControllerConfig
from rbd_control.dynamics import load_urdf
from ros_helpers import RELIABLE_DEEP, joint_state

MODULE = 'rbd_control.ros.controller.node'
COMMANDS = '/effort_controller/commands'
PR2 = 'pr2_description/urdf/pr2.urdf'
CALM_TIMEOUT = 5.0


def pr2_urdf():
    """From example-robot-data, found as test/dynamics finds it."""
    spec = importlib.util.spec_from_file_location(
        'rbd_test_dynamics_oracles',
        Path(__file__).parents[1] / 'dynamics' / 'dynamics_oracles.py')
    oracles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracles)
    return (oracles.robots_dir() / PR2).read_text()


def hold_state(model):
    """Mid-range where limited, 0.3 rad elsewhere: the shoulders need more than their 30 N m."""
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    limited = np.isfinite(lower) & np.isfinite(upper)
    q = np.full(model.nq, 0.3)
    q[limited] = 0.5 * (lower[limited] + upper[limited])
    return joint_state(model.joint_names, q, np.zeros(model.nq))


def answer(ros_node, process, state, timeout=30.0):
    """Publish `state` until the node answers; the first command."""
    publisher = ros_node.node.create_publisher(JointState, 'joint_states', 10)
    commands = ros_node.collect(Float64MultiArray, COMMANDS, RELIABLE_DEEP)
    ros_node.wait_for_subscribers(publisher)
    ros_node.wait_for_publishers(COMMANDS)

    def answered():
        assert process.alive(), process.log()
        if not commands:
            publisher.publish(state)
            ros_node.spin_for(0.1)
        return bool(commands)

    ros_node.wait_for(answered, timeout, 'a command')
    return np.array(commands[0].data)


def test_pr2_loads_with_each_warning_logged_once_and_gets_in_limit_gravity_torques(
        spawn_node, ros_node):
    urdf = pr2_urdf()
    model = load_urdf(urdf)
    assert model.warnings
    process = spawn_node(MODULE, {'robot_description': urdf, 'mode': 'gravity_compensation',
                                  'state_timeout': CALM_TIMEOUT})
    process.wait_for_log("model 'pr2'", timeout=60)
    log = process.log()
    for warning in model.warnings:
        assert log.count(warning) == 1, f'{warning!r} logged {log.count(warning)} times:\n{log}'

    state = hold_state(model)
    tau = answer(ros_node, process, state)
    assert tau.shape == (model.nq,) and np.all(np.isfinite(tau))
    assert np.all(np.abs(tau) <= model.effort_limit)
    core = Controller(model, ControllerConfig(mode='gravity_compensation',
                                              state_timeout=CALM_TIMEOUT))
    expected = core.update(0.0, state.name, state.position, state.velocity).tau
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9)
    shoulder = model.joint_names.index('r_shoulder_lift_joint')
    assert abs(tau[shoulder]) == model.effort_limit[shoulder], 'clamped at its URDF limit'


def test_strict_model_refuses_pr2_with_the_reason_and_publishes_nothing(spawn_node, ros_node):
    urdf = pr2_urdf()
    process = spawn_node(MODULE, {'robot_description': urdf, 'strict_model': True,
                                  'state_timeout': CALM_TIMEOUT})
    process.wait_for_log('strict mode', timeout=60)
    assert "'sensor_mount_link'" in process.log() and 'triangle inequality' in process.log()
    model = load_urdf(urdf)
    publisher = ros_node.node.create_publisher(JointState, 'joint_states', 10)
    commands = ros_node.collect(Float64MultiArray, COMMANDS, RELIABLE_DEEP)
    ros_node.wait_for_subscribers(publisher)
    for _ in range(10):
        publisher.publish(hold_state(model))
        ros_node.spin_for(0.1)
    assert process.alive() and not commands, process.log()
