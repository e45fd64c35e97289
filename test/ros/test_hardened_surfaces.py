"""rbd_controller's newer surfaces (keepalive, ~/payload, Cartesian mode, action server) under
hostile input, through the node in its own process: every case answered with a refusal that
names what is wrong, the keepalive alive, and the commands finite, within the URDF limits and
without gaps."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import InertiaStamped
from std_msgs.msg import Float64MultiArray

import ros_helpers as helpers
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf

NODE, MODULE = 'rbd_controller', 'rbd_control.ros.controller.node'
COMMANDS = '/effort_controller/commands'
URDF = default_arm_urdf()
MODEL = load_urdf(URDF)
JOINTS = list(MODEL.joint_names)
LIMITS = np.asarray(MODEL.effort_limit)
HOLD = np.full(6, 0.1)
SLOW_START = str(Path(__file__).with_name('slow_start_node.py'))


def test_the_keepalive_survives_a_start_up_where_it_runs_before_the_state_path(
        spawn_node, ros_node):
    # the keepalive's beat is old once the description is parsed: a keepalive started before
    # the state path exists would run the watchdog while it is being built
    process = spawn_node(SLOW_START, {'robot_description': URDF, 'state_timeout': 0.02})
    process.wait_for_log("model 'rbd_arm'", timeout=60)
    ros_node.wait_for_publishers(COMMANDS)
    ros_node.spin_for(0.5)
    log = process.log()
    assert 'Traceback' not in log and 'Error' not in log, log
    assert process.alive()


class Rig:
    """The node on the default arm (ee_link tool0), answering states at HOLD one at a time."""

    def __init__(self, spawn_node, ros_node, **parameters):
        from builtin_interfaces.msg import Time
        self.ros, self.Time = ros_node, Time
        # max_state_age 0: the oracle is fed no state ages
        self.process = spawn_node(MODULE, {'robot_description': URDF, 'state_timeout': 5.0,
                                           'max_state_age': 0.0, 'ee_link': 'tool0',
                                           'mode': 'gravity_compensation', **parameters})
        self.process.wait_for_log("model 'rbd_arm'", timeout=60)
        self.states = ros_node.node.create_publisher(helpers.JointState, 'joint_states', 10)
        self.commands = ros_node.collect(Float64MultiArray, COMMANDS, helpers.RELIABLE_DEEP)
        ros_node.wait_for_subscribers(self.states)
        ros_node.wait_for_publishers(COMMANDS)
        while not self.commands:
            self.states.publish(self.state(0.0))
            ros_node.spin_for(0.1)

    def state(self, t):
        return helpers.joint_state(JOINTS, HOLD, np.zeros(6),
                                   self.Time(sec=int(t), nanosec=int(round((t % 1) * 1e9))))

    def exchange(self, t):
        before = len(self.commands)
        self.states.publish(self.state(t))
        self.ros.wait_for(lambda: len(self.commands) > before, 10.0, 'a command')
        tau = np.array(self.commands[-1].data)
        assert np.all(np.isfinite(tau)) and np.all(np.abs(tau) <= LIMITS), tau
        return tau

    def set(self, **values):
        values = {name.replace('__', '.'): value for name, value in values.items()}
        return helpers.set_parameters(self.ros, NODE, values)


def payload_msg(link, mass, com_z=0.0):
    msg = InertiaStamped()
    msg.header.frame_id = link
    msg.inertia.m, msg.inertia.com.z = mass, com_z
    return msg


def gravity_with_payload(link, mass, com):
    from rbd_control.control import Controller, ControllerConfig
    controller = Controller(MODEL, ControllerConfig(mode='gravity_compensation'))
    controller.set_payload(link, mass, com)
    return controller.update(0.0, JOINTS, HOLD, np.zeros(6)).tau


def test_the_payload_is_bounded_used_by_the_cartesian_law_and_set_only_when_used(
        spawn_node, ros_node):
    rig = Rig(spawn_node, ros_node)
    assert rig.set(mode='cartesian_impedance')['mode'].successful
    bare = rig.exchange(1.0)       # anchors the target at HOLD: no pose error, no feedback
    topic = ros_node.node.create_publisher(InertiaStamped, f'/{NODE}/payload', 10)
    ros_node.wait_for_subscribers(topic)
    topic.publish(payload_msg('tool0', 3.0, 0.05))
    rig.process.wait_for_log("payload 3 kg on 'tool0'", timeout=10)
    loaded = rig.exchange(1.1)
    np.testing.assert_allclose(loaded, gravity_with_payload('tool0', 3.0, [0, 0, 0.05]),
                               atol=1e-9)
    assert np.max(np.abs(loaded - bare)) > 1.0        # the payload shows

    topic.publish(payload_msg('tool0', 5e307))          # finite, absurd: every torque inf
    rig.process.wait_for_log('mass must be finite and within [0, 10000] kg', timeout=10)
    np.testing.assert_allclose(rig.exchange(1.2), loaded, atol=1e-9)

    for name, value, named in (('payload.link', 'no_such_link', 'no_such_link'),
                               ('payload.com', [0.0, 0.0, 1e100], 'com'),
                               ('payload.mass', 1e12, 'payload.mass')):
        result = helpers.set_parameters(ros_node, NODE, {name: value})[name]
        assert not result.successful and named in result.reason, (name, result.reason)
    assert rig.process.alive()


def test_cartesian_mode_switched_at_runtime_refuses_a_model_without_its_ee_link(
        spawn_node, ros_node):
    rig = Rig(spawn_node, ros_node)           # started in gravity_compensation
    assert rig.set(mode='cartesian_impedance')['mode'].successful
    held = rig.exchange(1.0)
    other = URDF.replace('tool0', 'tool9')
    result = rig.set(robot_description=other)['robot_description']
    assert not result.successful and 'tool0' in result.reason, result.reason
    np.testing.assert_allclose(rig.exchange(1.1), held, atol=1e-9)
    assert 'AttributeError' not in rig.process.log()


@pytest.mark.wall_clock
def test_huge_goals_and_goal_floods_are_checked_beside_the_loop_and_forgotten(spawn_node,
                                                                              ros_node):
    from action_msgs.msg import GoalStatusArray
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from rbd_control.ros.controller.trajectory_action import RESULT_TIMEOUT
    from test_hostile_node import HostileRig, mark, MARKS, trajectory_msg

    huge = FollowJointTrajectory.Goal(trajectory=trajectory_msg(30_000))   # 3.6 MB
    small = FollowJointTrajectory.Goal(trajectory=trajectory_msg(3))
    bad = FollowJointTrajectory.Goal(trajectory=trajectory_msg(3, joints=JOINTS[:5] + ['nix']))
    rig = HostileRig(spawn_node, ros_node)
    client = ActionClient(ros_node.node, FollowJointTrajectory, f'/{NODE}/follow_joint_trajectory')
    ros_node.wait_for(client.server_is_ready, 30.0, 'the action server')
    statuses = ros_node.collect(GoalStatusArray, f'/{NODE}/follow_joint_trajectory/_action/status',
                                QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    rig.start_plant(spawn_node, 60)

    mark('30,000-point goal')
    client.send_goal_async(huge)
    rig.log_has('Accepted new action goal', timeout=60.0)
    mark('600 goals at ~200/s, then 300 refused ones')
    for goal in [small] * 600 + [bad] * 300:
        client.send_goal_async(goal)
        ros_node.spin_for(0.005)
    rig.log_has('action goal rejected: more than')
    ros_node.spin_for(2.0)
    gap = rig.check(MARKS)
    print(f'longest gap between commands: {gap * 1e3:.1f} ms')
    log = rig.process.log()          # once per period with a count, not once per goal
    assert log.count('action goal rejected') + log.count('action goal refused') <= 12, log[-3000:]
    flood = max(len(m.status_list) for m in statuses)
    assert flood <= 200, flood      # 10 goals/s kept for RESULT_TIMEOUT s, at most
    ros_node.spin_for(RESULT_TIMEOUT + 2.0)        # finished goals leave the status array
    before = len(statuses)
    client.send_goal_async(small)      # rclpy publishes the array on the next change
    ros_node.wait_for(lambda: len(statuses) > before, 10.0, 'a status array')
    assert len(statuses[-1].status_list) <= 2, len(statuses[-1].status_list)
    rig.check(MARKS)


def test_refused_payloads_and_cartesian_targets_are_logged_once_per_period(
        spawn_node, ros_node):
    from geometry_msgs.msg import PoseStamped
    rig = Rig(spawn_node, ros_node)             # gravity_compensation: targets are refused
    payload = ros_node.node.create_publisher(InertiaStamped, f'/{NODE}/payload', 10)
    pose = ros_node.node.create_publisher(PoseStamped, f'/{NODE}/target_pose', 10)
    ros_node.wait_for_subscribers(payload)
    ros_node.wait_for_subscribers(pose)
    for _ in range(200):
        payload.publish(payload_msg('no_such_link', 1.0))
        pose.publish(PoseStamped())
        ros_node.spin_for(0.005)
    rig.process.wait_for_log('(x ', timeout=10)           # the repeats, counted
    log = rig.process.log()
    assert 1 <= log.count('~/payload refused') <= 4, log
    assert 1 <= log.count('target pose refused') <= 4, log
    rig.exchange(1.0)
