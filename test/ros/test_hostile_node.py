"""rbd_controller under hostile input, measured as a plant sees it.

A separate process (publish_states.py) streams joint states like a robot; this process sends
the hostile messages, parameters and descriptions and listens to the commands. The figure
of merit is the longest gap between two published commands, by their DDS source timestamps
(the node's publish times, so this process being starved of CPU cannot fake a gap): it must
stay within 2 x state_timeout whatever arrives, and every command must be finite and within
the URDF effort limits.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from rbd_control.ros.controller.heavy_inputs import (DECODE_CHUNK, MAX_TRAJECTORY_BYTES,
                                                     string_from_cdr)

from ros_helpers import LATCHED, _call
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter

pytestmark = pytest.mark.wall_clock   # setup.cfg: nothing else at normal priority beside them

NODE = 'rbd_controller'
MODULE = 'rbd_control.ros.controller.node'
COMMANDS = '/effort_controller/commands'
TRAJECTORY = f'/{NODE}/joint_trajectory'
URDF = default_arm_urdf()
MODEL = load_urdf(URDF)
JOINTS = list(MODEL.joint_names)
LIMITS = np.asarray(MODEL.effort_limit)
STATE_TIMEOUT = 0.1
PLANT = str(Path(__file__).with_name('publish_states.py'))
DEEP = QoSProfile(depth=50_000, reliability=ReliabilityPolicy.RELIABLE)


def set_parameter(ros_node, name, value, timeout=60.0):
    request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
    return _call(ros_node, SetParameters, f'/{NODE}/set_parameters', request, timeout).results[0]


@pytest.mark.parametrize('text', ['', 'a', 'x' * (DECODE_CHUNK - 1) + 'é' + 'ü' * DECODE_CHUNK,
                                  '<robot name="r"/>' * 100_000])
def test_description_strings_are_read_from_their_serialized_form_as_rclpy_reads_them(text):
    from rclpy.serialization import serialize_message
    assert string_from_cdr(serialize_message(String(data=text))) == text


class CommandLog:
    """Every command with its source timestamp, drained from its subscription's queue by
    drain() (ros/drained.py: a node no executor spins, so nothing else takes them)."""

    def __init__(self, ros_node):
        from rbd_control.ros.drained import DrainedSubscriptions
        self._drained = DrainedSubscriptions(ros_node.node)
        self._drained.subscribe(Float64MultiArray, COMMANDS, self._on_command, DEEP,
                                with_info=True)
        self.times, self.efforts = [], []

    def drain(self):
        self._drained.drain()

    def _on_command(self, msg, info):
        self.times.append(info['source_timestamp'] * 1e-9)
        self.efforts.append(np.array(msg.data))

    def longest_gap(self, since=0.0):
        """(seconds, when it began: wall time) of the longest gap between commands."""
        times = np.array([t for t in self.times if t >= since])
        if times.size < 2:
            return math.inf, since
        k = int(np.argmax(np.diff(times)))
        return float(times[k + 1] - times[k]), float(times[k])


def trajectory_msg(points, joints=JOINTS, start=0.5, step=0.01, scale=0.2):
    msg = JointTrajectory(joint_names=list(joints))
    for k in range(points):
        t = start + k * step
        q = [scale * math.sin(0.5 * t + i) for i in range(len(joints))]
        v = [0.5 * scale * math.cos(0.5 * t + i) for i in range(len(joints))]
        if k == points - 1:
            v = [0.0] * len(joints)     # ends at rest, as JTC requires by default
        nanoseconds = int(t * 1e9)
        msg.points.append(JointTrajectoryPoint(
            positions=q, velocities=v,
            time_from_start=Duration(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9)))
    return msg


def padded(urdf, megabytes):
    """The same robot with `megabytes` of comment: as big as descriptions with inline meshes."""
    return urdf.replace('</robot>', f'<!-- {"x" * (megabytes * 2**20)} --></robot>')


def one_call_hold(text):
    """Seconds rclpy takes to serialise and deserialise std_msgs/String(text), one C call each
    (the GIL held throughout); the median of three. Not the best: the node's copies go to
    fresh memory (page faults on first touch), and the best of three is the warm case (here
    100 ms against 229 ms cold and 107 ms median; a run failed at 0.485 s against the
    0.444 s the best of three allowed)."""
    from rclpy.serialization import deserialize_message, serialize_message
    times = []
    for _ in range(3):
        start = time.perf_counter()
        deserialize_message(serialize_message(String(data=text)), String)
        times.append(time.perf_counter() - start)
    return sorted(times)[1]


class HostileRig:
    """The node, given its first model on the robot_description topic (so that later
    descriptions on the topic are used too: a set parameter would win over the topic)."""

    def __init__(self, spawn_node, ros_node, **parameters):
        self.ros = ros_node
        node = ros_node.node
        self.commands = CommandLog(ros_node)
        self.states = node.create_publisher(JointState, 'joint_states', 10)
        self.trajectories = node.create_publisher(JointTrajectory, TRAJECTORY, 10)
        self.descriptions = node.create_publisher(String, 'robot_description', LATCHED)
        self.descriptions.publish(String(data=URDF))
        self.process = spawn_node(MODULE, {'state_timeout': STATE_TIMEOUT,
                                           'mode': 'feedforward_pd', **parameters})
        self.process.wait_for_log("model 'rbd_arm'", timeout=60)
        ros_node.wait_for_subscribers(self.trajectories)

    def start_plant(self, spawn_node, seconds):
        self.plant = spawn_node(PLANT, node_name='plant', args=[
            '--rate', '200', '--duration', str(seconds), '--names', *JOINTS,
            '--handshake-topic', COMMANDS, '--ready-pause', '0.5'])
        self.ros.wait_for(lambda: 'ready' in self.plant.log() or not self.plant.alive(), 60,
                          'the plant to be matched')
        self.ros.spin_for(1.0)
        self.commands.drain()
        self.since = time.time()

    def log_has(self, text, timeout=30.0):
        try:
            self.ros.wait_for(lambda: text in self.process.log(), timeout, f'{text!r} in the log')
        except pytest.fail.Exception:   # say what the node logged instead
            pytest.fail(f'{text!r} not in the log within {timeout} s; its end:\n'
                        f'{self.process.log()[-3000:]}')

    def publish_goal_until_accepted(self, goal, text, attempts=5, wait=5.0):
        """Publish a goal until the node logs `text`. A goal checked while the states are
        stale is refused, by design: on a busy machine the huge states published just before
        can take a few hundred ms to drain (334 ms seen), so a goal that is refused (or not
        answered: a repeated refusal is logged later, with a count) is sent again."""
        for _ in range(attempts):
            start = len(self.process.log())
            self.trajectories.publish(goal)
            end = time.monotonic() + wait
            while time.monotonic() < end:
                self.ros.spin_for(0.05)
                new = self.process.log()[start:]
                if text in new:
                    return
                if 'joint states are stale' in new:
                    break
            self.ros.spin_for(0.5)
        self.log_has(text, timeout=0.0)   # fails, with the log

    def publish_until_logged(self, msg, text, timeout=30.0):
        """Publish a state among the plant's until the node logs `text`: the node answers the
        newest queued state, so one that arrives just before a plant state is coalesced."""
        last = [0.0]

        def logged():
            if text in self.process.log():
                return True
            if time.monotonic() - last[0] > 0.2:    # a few per second, not a flood
                last[0] = time.monotonic()
                self.states.publish(msg)
            return False
        self.ros.wait_for(logged, timeout, f'{text!r} in the log')

    def check(self, marks=(), since=None, allowance=0.0):
        """The plant's view: never more than 2 x state_timeout (+ allowance) without a command,
        from `since` (wall time; default: the plant's start)."""
        since = self.since if since is None else since
        self.commands.drain()
        assert self.process.alive(), self.process.log()
        efforts = np.array(self.commands.efforts)
        assert np.all(np.isfinite(efforts))
        assert np.all(np.abs(efforts) <= LIMITS + 1e-9)
        gap, began = self.commands.longest_gap(since)
        steps = ', '.join(f'{name} at {t - self.since:.2f} s' for name, t in marks)
        assert gap <= 2 * STATE_TIMEOUT + allowance, (
            f'{gap:.3f} s without a command from {began - self.since:.2f} s ({steps}):\n'
            f'{self.process.log()[-3000:]}')
        return gap


MARKS = []


def mark(name):
    MARKS.append((name, time.time()))


def test_hostile_messages_parameters_and_descriptions_never_stop_the_commands(
        spawn_node, ros_node):
    # everything is built before the plant starts: this process must not compete for the
    # CPU while it measures
    huge_state = JointState(name=JOINTS + [f'junk_{i}' for i in range(40_001)] + ['junk_3'])
    huge_state.position = [0.0] * len(huge_state.name)
    huge_state.velocity = [0.0] * len(huge_state.name)
    partial_state = JointState(name=JOINTS[:5], position=[0.1] * 5, velocity=[0.0] * 5)
    long_goal = trajectory_msg(10_000)
    oversized_goal = trajectory_msg(MAX_TRAJECTORY_BYTES // 100 + 1000)
    bad_goal = trajectory_msg(3, joints=JOINTS[:5] + ['no_such_joint'])
    big_description, bigger_description = padded(URDF, 30), padded(URDF, 31)
    hold = one_call_hold(bigger_description)

    rig = HostileRig(spawn_node, ros_node)
    rig.start_plant(spawn_node, 90)

    mark('40,008-name states')   # refused by their size before they are mapped
    rig.publish_until_logged(huge_state, 'joint state refused: 40008 names')

    mark('states lacking a joint')   # answered with the hold; the node must not trip over it
    rig.publish_until_logged(partial_state, 'state is missing joints')

    mark('10,000-point goal')    # accepted: its per-point work is done beside the loop
    rig.publish_goal_until_accepted(long_goal, 'trajectory accepted: 10000 points')

    mark('oversized goal')       # refused by its byte count before deserialisation
    rig.trajectories.publish(oversized_goal)
    rig.log_has('trajectory refused: ')

    mark('300 bad goals')        # a few log lines with a count, not one per goal
    for _ in range(300):
        rig.trajectories.publish(bad_goal)
    rig.ros.spin_for(3.0)
    assert 1 <= rig.process.log().count('no_such_joint') <= 6

    mark('kp=1e308')             # a named refusal
    result = set_parameter(rig.ros, f'gains.{JOINTS[1]}.p', 1e308)
    assert not result.successful and JOINTS[1] in result.reason

    gap = rig.check(MARKS)
    print(f'longest gap between commands: {gap * 1e3:.1f} ms')

    # The node decodes a description 1 MB at a time beside its loop (and sends it to its
    # parse helper 1 MB at a time), but a few steps still pass over all of it in one C call
    # each, the GIL held: the take of the serialized message and the join of the decoded
    # pieces (a 30 MB copy each), the comparison with the description in use. Together at most
    # one serialise + deserialise `hold` measured on this machine, which the bound adds once:
    # on a slow hour of the shared VM this step took 0.23 s, on a quiet one 0.06-0.08 s.
    mark('30 MB on the topic')
    rig.descriptions.publish(String(data=big_description))
    rig.ros.wait_for(lambda: rig.process.log().count("model 'rbd_arm' from the robot_description "
                                                     "topic") == 2, 60, 'the 30 MB model')
    gap = rig.check(MARKS, since=MARKS[-1][1], allowance=hold)
    print(f'longest gap after the 30 MB on the topic: {gap * 1e3:.1f} ms')

    # A set parameter arrives as one service request, which rclpy deserialises (and
    # republishes on /parameter_events) in single C calls that hold the GIL: every thread of
    # the node waits that long whatever it does (README: large descriptions are best sent on
    # the topic). So this step's bound adds that hold, measured on this machine, twice (the
    # request's deserialisation and the /parameter_events message's serialisation), and once
    # more for the node's own passes, as on the topic (0.44 and 0.51 s seen on slow hours,
    # against a 0.39 s bound with two).
    mark('31 MB as parameter')
    assert set_parameter(rig.ros, 'robot_description', bigger_description).successful
    rig.ros.spin_for(1.0)
    gap = rig.check(MARKS, since=MARKS[-1][1], allowance=3 * hold)
    print(f'longest gap after the 31 MB parameter: {gap * 1e3:.1f} ms '
          f'(rclpy holds the GIL {hold * 1e3:.0f} ms to serialise and deserialise it once)')


# Mutated descriptions into the running node (load_urdf itself is fuzzed in test/dynamics):
# hypothesis draws which attribute of which element gets which bad value, eight times per
# node (a node per example would cost a minute each).
ATTRIBUTES = [('lower="-2.6"', 'lower="{}"'), ('upper="2.2"', 'upper="{}"'),
              ('effort="80"', 'effort="{}"'), ('<mass value="', '<mass value="{}'),
              ('<axis xyz="0 1 0"/>', '<axis xyz="{} 0 0"/>'), ('ixx="', 'ixx="{}'),
              ('name="wrist_2"', 'name="{}"'), ('velocity="3.0"', 'velocity="{}"')]
VALUES = st.sampled_from(['nan', 'inf', '-1', '0', '1e308', '-1e308', '', 'wrist_1', 'x'])
STRUCTURE = st.sampled_from([
    lambda u: u.replace('</robot>', '<a>' * 5000 + '</a>' * 5000 + '</robot>'),  # deep nesting
    lambda u: u[: len(u) // 2],                                                  # truncated
    lambda u: u.replace('name="wrist_2"', 'name="wrist_1"', 1),                  # duplicate
    lambda u: u.replace('<robot', '<!DOCTYPE r [<!ENTITY e "x">]><robot'),        # a DTD
])


@st.composite
def mutated_descriptions(draw):
    if draw(st.booleans()):
        return draw(STRUCTURE)(URDF)
    old, new = draw(st.sampled_from(ATTRIBUTES))
    return URDF.replace(old, new.format(draw(VALUES)), 1)


@settings(max_examples=1, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_descriptions_are_refused_or_used_and_never_stop_the_commands(
        spawn_node, ros_node, data):
    rig = HostileRig(spawn_node, ros_node)
    rig.start_plant(spawn_node, 60)
    for _ in range(4):   # by topic first: a set parameter would win over the topic
        rig.descriptions.publish(String(data=data.draw(mutated_descriptions())))
        rig.ros.spin_for(0.5)
    for _ in range(4):
        result = set_parameter(rig.ros, 'robot_description', data.draw(mutated_descriptions()))
        assert result.successful or result.reason
        rig.ros.spin_for(0.5)
    rig.ros.spin_for(1.0)
    rig.check()
