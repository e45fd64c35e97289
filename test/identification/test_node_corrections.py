"""rbd_controller with friction.* and payload.* parameters and the ~/payload topic, in its own
process; the expected torques come from the ROS-free Controller given the same corrections."""
from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import InertiaStamped
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory as TrajectoryMsg, JointTrajectoryPoint

from ident_support import load
from rbd_control.control import Controller, ControllerConfig, JointTrajectory, TrajectoryPoint
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf

helpers = load("ros/ros_helpers.py", "rbd_test_ident_ros_helpers")

NODE, MODULE = "rbd_controller", "rbd_control.ros.controller.node"
COMMANDS = "/effort_controller/commands"
URDF = default_arm_urdf()
MODEL = load_urdf(URDF)
JOINTS = list(MODEL.joint_names)
HOLD = np.full(6, 0.1)
TARGET = HOLD + np.array([0.4, -0.3, 0.5, 0.6, -0.4, 0.8])
FRICTION = {"elbow": {"viscous": 2.0, "coulomb": 1.5}, "wrist_1": {"viscous": 0.0,
                                                                   "coulomb": 0.5}}
PAYLOAD = dict(link="tool0", mass=1.5, com=[0.0, 0.0, 0.05])
TIMEOUT = 5.0


def parameters(mode):
    # max_state_age 0: the oracle is fed no state ages, so a busy machine must not soften the
    # node's gains (test/ros/test_loop_health.py tests the guard)
    values = {"robot_description": URDF, "mode": mode, "state_timeout": TIMEOUT,
              "max_state_age": 0.0, "payload.link": PAYLOAD["link"],
              "payload.mass": PAYLOAD["mass"], "payload.com": PAYLOAD["com"]}
    for joint, fields in FRICTION.items():
        values.update({f"friction.{joint}.{f}": v for f, v in fields.items()})
    return values


def oracle(mode, friction=FRICTION):
    controller = Controller(MODEL, ControllerConfig(mode=mode, friction=friction,
                                                    state_timeout=TIMEOUT))
    controller.set_payload(PAYLOAD["link"], PAYLOAD["mass"], PAYLOAD["com"])
    controller.update(0.0, JOINTS, HOLD, np.zeros(6))
    return controller


class Rig:
    def __init__(self, spawn_node, ros_node, mode):
        self.ros = ros_node
        self.process = spawn_node(MODULE, parameters(mode))
        self.process.wait_for_log("model 'rbd_arm'", timeout=60)
        self.states = ros_node.node.create_publisher(helpers.JointState, "joint_states", 10)
        self.commands = ros_node.collect(Float64MultiArray, COMMANDS, helpers.RELIABLE_DEEP)
        ros_node.wait_for_subscribers(self.states)
        ros_node.wait_for_publishers(COMMANDS)
        while not self.commands:                         # the first state: hold HOLD
            self.states.publish(self.state(0.0))
            ros_node.spin_for(0.1)
        ros_node.spin_for(0.2)

    @staticmethod
    def state(t):
        return helpers.joint_state(JOINTS, HOLD, np.zeros(6),
                                   Time(sec=int(t), nanosec=int(round((t % 1) * 1e9))))

    def exchange(self, t):
        before = len(self.commands)
        self.states.publish(self.state(t))
        self.ros.wait_for(lambda: len(self.commands) > before, 10.0, "a command")
        return np.array(self.commands[-1].data)


def test_friction_and_payload_parameters_reach_the_feedforward(spawn_node, ros_node):
    rig = Rig(spawn_node, ros_node, "feedforward_pd")
    start = 3.0        # in the future of any control time the node has when it gets the goal
    publisher = ros_node.node.create_publisher(TrajectoryMsg, f"/{NODE}/joint_trajectory", 10)
    ros_node.wait_for_subscribers(publisher)
    goal = TrajectoryMsg(joint_names=JOINTS)
    goal.header.stamp = Time(sec=int(start))
    goal.points = [JointTrajectoryPoint(positions=list(HOLD), time_from_start=Duration()),
                   JointTrajectoryPoint(positions=list(TARGET), time_from_start=Duration(sec=1))]
    rig.exchange(0.5)
    publisher.publish(goal)
    ros_node.spin_for(0.5)
    expected, plain = oracle("feedforward_pd"), oracle("feedforward_pd", friction=None)
    points = [TrajectoryPoint(positions=HOLD, time_from_start=0.0),
              TrajectoryPoint(positions=TARGET, time_from_start=1.0)]
    for controller in (expected, plain):
        controller.update(0.5, JOINTS, HOLD, np.zeros(6))
        controller.set_trajectory(JointTrajectory(JOINTS, points, start_time=start), 1.0)
    for t in (1.5, 2.5, 3.002, 3.004, 3.006):      # soon after the start: no saturation
        tau = rig.exchange(t)
        want = expected.update(t, JOINTS, HOLD, np.zeros(6))
        assert helpers.max_abs_difference(tau, want.tau) <= 1e-9, f"t = {t}"
    without = plain.update(3.006, JOINTS, HOLD, np.zeros(6))
    assert not want.saturated[2] and abs(tau[2] - without.tau[2]) > 1.5, \
        "the elbow's friction must show"


def test_payload_from_parameters_and_topic(spawn_node, ros_node):
    rig = Rig(spawn_node, ros_node, "gravity_compensation")
    expected = oracle("gravity_compensation")
    assert helpers.max_abs_difference(rig.exchange(1.0), expected.update(
        1.0, JOINTS, HOLD, np.zeros(6)).tau) <= 1e-9

    results = helpers.set_parameters(ros_node, NODE, {"payload.mass": 3.0})
    assert results["payload.mass"].successful
    expected.set_payload(PAYLOAD["link"], 3.0, PAYLOAD["com"])
    assert helpers.max_abs_difference(rig.exchange(1.1), expected.update(
        1.1, JOINTS, HOLD, np.zeros(6)).tau) <= 1e-9
    shown_gains_are(ros_node, expected)

    refused = helpers.set_parameters(ros_node, NODE, {"payload.com": [0.0, 0.1]})
    assert not refused["payload.com"].successful
    assert "payload.com needs 0 or 3 values" in refused["payload.com"].reason

    topic = ros_node.node.create_publisher(InertiaStamped, f"/{NODE}/payload", 10)
    ros_node.wait_for_subscribers(topic)
    msg = InertiaStamped()
    msg.header.frame_id = "flange_link"
    msg.inertia.m, msg.inertia.com.z = 0.8, 0.02
    msg.inertia.ixx = msg.inertia.iyy = msg.inertia.izz = 1e-3
    topic.publish(msg)
    rig.process.wait_for_log("payload 0.8 kg on 'flange_link'", timeout=10)
    expected.set_payload("flange_link", 0.8, [0.0, 0.0, 0.02], [1e-3, 1e-3, 1e-3])
    loaded = rig.exchange(1.2)
    assert helpers.max_abs_difference(loaded, expected.update(
        1.2, JOINTS, HOLD, np.zeros(6)).tau) <= 1e-9
    shown_gains_are(ros_node, expected)

    msg.header.frame_id = "no_such_link"
    topic.publish(msg)
    rig.process.wait_for_log("~/payload refused", timeout=10)
    assert rig.process.alive()
    assert helpers.max_abs_difference(rig.exchange(1.3), loaded) <= 1e-9


def shown_gains_are(ros_node, expected):
    """The gains.<joint>.p/.d parameters show the default gains of the payload carried."""
    names = [f"gains.{joint}.{field}" for joint in JOINTS for field in ("p", "d")]
    shown = helpers.get_parameters(ros_node, NODE, names)
    want = [getattr(expected.gains, core)[i] for i in range(len(JOINTS)) for core in ("kp", "kd")]
    np.testing.assert_allclose([shown[name] for name in names], want, rtol=1e-12)
