"""rbd_controller in its own process, driven by real rclpy from this one.

The expected torques come from the ROS-free core (rbd_control.control.Controller)
fed the same states with the same configuration: the node must add nothing to it
but message conversion.
"""
import re
import time
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.safety.command_limits import LimitsConfig
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import gravity, load_urdf
from ros_helpers import (LATCHED, RELIABLE_DEEP, finite, get_parameters, joint_state,
                         max_abs_difference, set_parameters, shuffled_state)

NODE = 'rbd_controller'
MODULE = 'rbd_control.ros.controller.node'
COMMANDS = '/effort_controller/commands'
URDF = default_arm_urdf()
MODEL = load_urdf(URDF)
ALL_JOINTS = list(MODEL.joint_names)
# A command order unlike the URDF's, to show the node reorders by name.
JOINTS = [ALL_JOINTS[i] for i in (5, 2, 0, 4, 1, 3)]
# Long enough that the watchdog never fires between the exchanges of a slow test run.
CALM_TIMEOUT = 5.0
TOLERANCE = 1e-9
STREAM_SCRIPT = str(Path(__file__).with_name('publish_states.py'))


def heavier_urdf():
    """The default arm with a 2 kg heavier elbow link: a different gravity torque."""
    elbow_link = re.search(r'<joint name="elbow".*?<child link="(\w+)"', URDF, re.S).group(1)
    start = URDF.index(f'<link name="{elbow_link}"')
    mass_at = URDF.index('<mass value="', start) + len('<mass value="')
    end = URDF.index('"', mass_at)
    return URDF[:mass_at] + str(float(URDF[mass_at:end]) + 2.0) + URDF[end:]


# The first state every started node gets (see Rig.handshake).
PROBE = joint_state(ALL_JOINTS, np.full(len(ALL_JOINTS), 0.1), np.zeros(len(ALL_JOINTS)))


def core(mode, model=MODEL, joints=JOINTS, probed=True, **config):
    """The core as the node runs it; `probed`: it has seen PROBE first, like the node."""
    config.setdefault('state_timeout', CALM_TIMEOUT)
    config.setdefault('limits', LimitsConfig(torque_rate=0.0))   # as start() runs the node
    controller = Controller(model, ControllerConfig(mode=mode, joints=list(joints), **config))
    if probed:
        controller.update(-1.0, PROBE.name, PROBE.position, PROBE.velocity)
    return controller


def random_state(rng, scale=0.8):
    return rng.uniform(-scale, scale, len(ALL_JOINTS)), rng.uniform(-0.5, 0.5, len(ALL_JOINTS))


class Rig:
    """The node under test plus this process's publishers and subscribers."""

    def __init__(self, ros_node, process, handshake=True):
        self.ros = ros_node
        self.process = process
        self.states = ros_node.node.create_publisher(JointState, 'joint_states', 10)
        self.commands = ros_node.collect(Float64MultiArray, COMMANDS, RELIABLE_DEEP)
        self.ros.wait_for_subscribers(self.states)
        self.ros.wait_for_publishers(COMMANDS)
        if handshake:
            self.handshake()

    def handshake(self, timeout=20.0):
        """Publish PROBE until the node answers. A publisher counts a subscriber as
        matched before the subscriber has matched it back; states sent in between are
        lost (volatile QoS), so only an answer proves the path works both ways."""
        end = time.monotonic() + timeout
        while not self.commands:
            if time.monotonic() > end or not self.process.alive():
                pytest.fail(f'no answer to the probe state:\n{self.process.log()}')
            self.states.publish(PROBE)
            self.ros.spin_for(0.1)
        self.ros.spin_for(0.1)         # answers to repeated probes
        self.commands.clear()

    def settle(self, seconds=1.0):
        """Without a model there is no answer to wait for: give matching time instead."""
        self.ros.spin_for(seconds)

    def exchange(self, msg, timeout=5.0):
        """Publish one state; return the command that answers it."""
        before = len(self.commands)
        self.states.publish(msg)
        self.ros.wait_for(lambda: len(self.commands) > before, timeout, 'a command')
        assert len(self.commands) == before + 1, 'one state must give exactly one command'
        return np.array(self.commands[-1].data)

    def silence(self, msg, seconds=1.0):
        """Publish a state and check no command comes within `seconds`."""
        before = len(self.commands)
        self.states.publish(msg)
        self.ros.spin_for(seconds)
        return len(self.commands) - before


def start(spawn_node, ros_node, *, description=True, handshake=True, **parameters):
    parameters.setdefault('state_timeout', CALM_TIMEOUT)
    # the oracle is fed no state ages: a busy machine must not soften the node's gains
    # (test_loop_health.py tests the guard)
    parameters.setdefault('max_state_age', 0.0)
    # nor its oscillation detector: random states swing at random (test_oscillation.py tests it)
    parameters.setdefault('oscillation.frequency', 0.0)
    # nor the torque rate: its dt is the node's control time between states, which the oracle
    # does not see (random states jump; test_command_limits.py tests the rate)
    parameters.setdefault('limits.torque_rate', 0.0)
    if description:
        parameters['robot_description'] = URDF
    process = spawn_node(MODULE, parameters)
    if description:
        process.wait_for_log("model 'rbd_arm'", timeout=30)
    return Rig(ros_node, process, handshake=description and handshake)


# ---------------------------------------------------------------------- torques

def test_effort_equals_core_torque_for_shuffled_states_with_extra_joints(spawn_node, ros_node):
    # gains for a 1 kHz loop up to 30 Hz (loop_design.py), stiff enough that the random errors
    # saturate some joints (the default 250 Hz / 10 ms design does not)
    loop = dict(expected_state_period=0.001, expected_delay=0.0, bandwidth_hz=30.0)
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS, **loop)
    oracle = core('feedforward_pd', **loop)
    rng = np.random.default_rng(5)
    for k in range(15):
        q, qd = random_state(rng)
        msg = shuffled_state(rng, ALL_JOINTS, q, qd)
        published = rig.exchange(msg)
        expected = oracle.update(float(k), msg.name, msg.position, msg.velocity).tau
        assert published.shape == (len(JOINTS),)
        assert max_abs_difference(published, expected) <= TOLERANCE
    assert rig.process.alive()
    # errors of up to ~0.9 rad against the model-derived gains saturate some joints:
    # the commands stop exactly at the URDF limits, never beyond
    limit = np.asarray(MODEL.effort_limit)[[ALL_JOINTS.index(j) for j in JOINTS]]
    efforts = np.abs([c.data for c in rig.commands])
    assert np.all(efforts <= limit)
    assert np.any(efforts == limit), 'expected some saturated commands'


def test_without_joints_parameter_all_urdf_joints_are_controlled_in_urdf_order(
        spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='gravity_compensation')
    oracle = core('gravity_compensation', joints=ALL_JOINTS)
    rng = np.random.default_rng(6)
    q, qd = random_state(rng)
    msg = shuffled_state(rng, ALL_JOINTS, q, qd)
    expected = oracle.update(0.0, msg.name, msg.position, msg.velocity).tau
    assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE


# ---------------------------------------------------------------------- parameters

def test_shipped_config_file_runs_the_default_arm(spawn_node, ros_node):
    """config/arm_controller.yaml as arm.launch.py passes it: every value has the type
    the node declared (a YAML int for a double parameter would stop the node)."""
    import yaml
    config_file = Path(__file__).resolve().parents[2] / 'config' / 'arm_controller.yaml'
    config = yaml.safe_load(config_file.read_text())['/**']['ros__parameters']
    # state_timeout overridden (the later file wins): at the shipped 0.1 s a slow moment
    # of this test would let the watchdog add safe commands between the exchanges; the
    # state-age guard off, as the oracle is fed no ages
    process = spawn_node(MODULE, {'robot_description': URDF, 'state_timeout': CALM_TIMEOUT,
                                  'max_state_age': 0.0},
                         ros_args=['--params-file', str(config_file)])
    process.wait_for_log("model 'rbd_arm'", timeout=30)
    rig = Rig(ros_node, process)
    oracle = core(config['mode'], joints=config['joints'])
    rng = np.random.default_rng(16)
    msg = shuffled_state(rng, ALL_JOINTS, *random_state(rng))
    expected = oracle.update(0.0, msg.name, msg.position, msg.velocity).tau
    assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE


def runtime_rig(spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='gravity_compensation', joints=JOINTS)
    oracle = core('gravity_compensation')
    rng = np.random.default_rng(7)

    def compare(k):
        q, qd = random_state(rng)
        msg = shuffled_state(rng, ALL_JOINTS, q, qd)
        expected = oracle.update(float(k), msg.name, msg.position, msg.velocity).tau
        assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE
        return expected
    return oracle, compare


def test_runtime_mode_and_gain_changes_take_effect(spawn_node, ros_node):
    oracle, compare = runtime_rig(spawn_node, ros_node)
    compare(0)
    results = set_parameters(ros_node, NODE, {'mode': 'computed_torque'})
    assert results['mode'].successful
    oracle.set_mode('computed_torque', 0.5)
    compare(1)
    compare(2)

    results = set_parameters(ros_node, NODE, {'gains.elbow.p': 321.0, 'gains.wrist_1.d': 3.5})
    assert all(r.successful for r in results.values())
    oracle.set_gains(kp={'elbow': 321.0}, kd={'wrist_1': 3.5})
    compare(3)

    results = set_parameters(ros_node, NODE, {'mode': 'feedforward_pd'})
    assert results['mode'].successful
    oracle.set_mode('feedforward_pd', 3.5)
    compare(4)


def test_runtime_gravity_override_changes_the_torque(spawn_node, ros_node):
    oracle, compare = runtime_rig(spawn_node, ros_node)
    compare(0)
    results = set_parameters(ros_node, NODE, {'gravity': [0.0, 0.0, -3.71]})
    assert results['gravity'].successful
    oracle.set_model(MODEL.with_gravity(np.array([0.0, 0.0, -3.71])))
    on_mars = compare(1)
    assert np.any(np.abs(on_mars) > 1e-3), 'gravity compensation must do something'
    back_to_urdf = Parameter('gravity', Parameter.Type.DOUBLE_ARRAY, [])
    results = set_parameters(ros_node, NODE, {'gravity': back_to_urdf})
    assert results['gravity'].successful
    oracle.set_model(MODEL)
    compare(2)


@pytest.mark.parametrize('mode, parameters', [
    ('feedforward_pd', {'effort_scale': 0.5}),
    ('gravity_compensation', {'damping': 2.0}),
])
def test_startup_parameters_reach_the_core(spawn_node, ros_node, mode, parameters):
    rig = start(spawn_node, ros_node, mode=mode, joints=JOINTS, **parameters)
    oracle = core(mode, **parameters)
    rng = np.random.default_rng(17)
    for k in range(5):
        msg = shuffled_state(rng, ALL_JOINTS, *random_state(rng))
        expected = oracle.update(float(k), msg.name, msg.position, msg.velocity).tau
        assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE
    assert max_abs_difference(expected, core(mode).update(
        5.0, msg.name, msg.position, msg.velocity).tau) > 1e-3, 'the parameter changed nothing'


def test_gain_parameters_show_the_core_defaults(spawn_node, ros_node):
    start(spawn_node, ros_node, joints=JOINTS, **{'gains.elbow.p': 250.0})
    gains = core('feedforward_pd').gains
    names = [f'gains.{j}.{f}' for j in JOINTS for f in ('p', 'd')]
    values = get_parameters(ros_node, NODE, names)
    for index, joint in enumerate(JOINTS):
        expected_p = 250.0 if joint == 'elbow' else gains.kp[index]
        assert values[f'gains.{joint}.p'] == pytest.approx(expected_p, rel=1e-12)
        assert values[f'gains.{joint}.d'] == pytest.approx(gains.kd[index], rel=1e-12)


@pytest.mark.parametrize('name, value, reason', [
    ('gains.elbow.p', -1.0, 'gains.elbow.p'),
    ('gains.shoulder_pan.d', float('nan'), 'gains.shoulder_pan.d'),
    ('mode', 'impedance', 'unknown mode'),
    ('gravity', [0.0, -9.81], 'gravity needs 3 values'),
    ('robot_description', '<robot name="broken"><link', 'robot_description'),
    ('effort_scale', 0.5, 'read-only'),
    ('joints', ['elbow'], 'read-only'),
])
def test_invalid_parameter_is_refused_with_a_reason(spawn_node, ros_node, name, value, reason):
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS)
    before = get_parameters(ros_node, NODE, [name]).get(name)
    result = set_parameters(ros_node, NODE, {name: value})[name]
    assert not result.successful
    assert reason in result.reason, result.reason
    if before is not None:
        after = get_parameters(ros_node, NODE, [name]).get(name)
        assert after == before
    # still controlling with the same configuration
    oracle = core('feedforward_pd')
    msg = shuffled_state(np.random.default_rng(8), ALL_JOINTS,
                         *random_state(np.random.default_rng(9)))
    expected = oracle.update(0.0, msg.name, msg.position, msg.velocity).tau
    assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE


def test_invalid_startup_parameter_stops_the_node_with_the_reason(spawn_node, ros_env):
    process = spawn_node(MODULE, {'robot_description': URDF, 'mode': 'impedance'})
    process.process.wait(timeout=30)
    assert process.process.returncode == 1
    assert "unknown mode 'impedance'" in process.log()


# ---------------------------------------------------------------------- descriptions

@pytest.mark.parametrize('order', ['topic_before_node', 'node_before_topic'])
def test_robot_description_from_transient_local_topic(spawn_node, ros_node, order):
    description = ros_node.node.create_publisher(String, 'robot_description', LATCHED)
    if order == 'topic_before_node':
        description.publish(String(data=URDF))
    rig = start(spawn_node, ros_node, description=False, mode='gravity_compensation')
    rng = np.random.default_rng(10)
    msg = shuffled_state(rng, ALL_JOINTS, *random_state(rng))
    if order == 'node_before_topic':
        rig.settle()
        assert rig.silence(msg, 1.0) == 0, 'no model yet: nothing may be published'
        description.publish(String(data=URDF))
    rig.process.wait_for_log('from the robot_description topic', timeout=30)
    rig.handshake()
    oracle = core('gravity_compensation', joints=ALL_JOINTS)
    expected = oracle.update(0.0, msg.name, msg.position, msg.velocity).tau
    assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE


def test_new_description_reloads_and_bad_one_keeps_the_last_good_model(spawn_node, ros_node):
    description = ros_node.node.create_publisher(String, 'robot_description', LATCHED)
    rig = start(spawn_node, ros_node, description=False, mode='gravity_compensation')
    rng = np.random.default_rng(11)
    msg = shuffled_state(rng, ALL_JOINTS, *random_state(rng))

    description.publish(String(data=URDF))
    rig.process.wait_for_log("model 'rbd_arm' from the robot_description topic", timeout=30)
    rig.handshake()
    light = rig.exchange(msg)

    description.publish(String(data=URDF))      # the same again: kept, not reloaded
    rig.process.wait_for_log('robot description from the robot_description topic unchanged', 30)
    assert rig.process.log().count("model 'rbd_arm'") == 1

    heavy_model = load_urdf(heavier_urdf())
    description.publish(String(data=heavier_urdf()))
    ros_node.wait_for(lambda: rig.process.log().count("model 'rbd_arm'") >= 2, 30, 'the reload')
    heavy = rig.exchange(msg)
    expected = core('gravity_compensation', heavy_model, ALL_JOINTS).update(
        0.0, msg.name, msg.position, msg.velocity).tau
    assert max_abs_difference(heavy, expected) <= TOLERANCE
    assert max_abs_difference(heavy, light) > 1e-3

    description.publish(String(data='<robot name="oops"><link name="a"/>'))
    rig.process.wait_for_log('rejected robot description', timeout=30)
    assert 'keeping the previous model' in rig.process.log()
    assert rig.process.alive()
    assert max_abs_difference(rig.exchange(msg), heavy) <= TOLERANCE


def test_invalid_description_parameter_at_start_publishes_nothing_but_stays_up(
        spawn_node, ros_node):
    process = spawn_node(MODULE, {'robot_description': 'not a urdf', 'state_timeout': 0.1})
    rig = Rig(ros_node, process, handshake=False)
    process.wait_for_log('rejected robot description', timeout=30)
    rig.settle()
    rng = np.random.default_rng(12)
    assert rig.silence(shuffled_state(rng, ALL_JOINTS, *random_state(rng)), 1.0) == 0
    assert process.alive()


# ---------------------------------------------------------------------- safety

@pytest.mark.parametrize('safe_action', ['hold', 'zero'])
def test_stale_joint_states_trigger_the_safe_action_within_state_timeout(
        spawn_node, ros_node, safe_action):
    timeout = 0.2
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS,
                state_timeout=timeout, safe_action=safe_action)
    oracle = core('feedforward_pd', state_timeout=timeout, safe_action=safe_action)
    rng = np.random.default_rng(13)
    q, qd = random_state(rng)
    msg = shuffled_state(rng, ALL_JOINTS, q, qd)
    for _ in range(20):                     # a 100 Hz stream ...
        rig.states.publish(msg)
        ros_node.spin_for(0.01)
    stopped = time.monotonic()              # ... that stops
    count = len(rig.commands)
    assert count >= 15
    oracle.update(0.0, msg.name, msg.position, msg.velocity)
    safe = oracle.check_watchdog(10.0).tau

    def safe_arrived():
        return any(max_abs_difference(c.data, safe) <= TOLERANCE for c in rig.commands[count:])
    # watchdog period is timeout/4; allow one period plus scheduling slack
    ros_node.wait_for(safe_arrived, timeout + timeout / 4 + 0.25, 'the safe command')
    elapsed = time.monotonic() - stopped
    assert elapsed >= timeout * 0.9, f'safe action after {elapsed:.3f} s, before the timeout'
    if safe_action == 'zero':
        assert np.all(np.asarray(safe) == 0.0)
    else:
        assert np.any(np.abs(safe) > 1.0), 'hold must hold the arm up against gravity'


def test_non_finite_and_malformed_states_never_produce_non_finite_commands(
        spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='computed_torque', joints=JOINTS)
    rng = np.random.default_rng(14)
    q, qd = random_state(rng)
    good = joint_state(ALL_JOINTS, q, qd)
    nan_position = joint_state(ALL_JOINTS, np.where(np.arange(6) == 2, np.nan, q), qd)
    inf_velocity = joint_state(ALL_JOINTS, q, np.where(np.arange(6) == 4, np.inf, qd))
    no_velocity = joint_state(ALL_JOINTS, q)
    short = joint_state(ALL_JOINTS, q[:5], qd)
    missing_joint = joint_state(ALL_JOINTS[:5], q[:5], qd[:5])
    huge = joint_state(ALL_JOINTS, q * 1e300, qd)
    bad = [nan_position, inf_velocity, no_velocity, short, huge]

    rig.exchange(good)
    for msg in bad:
        assert rig.silence(msg, 0.2) == 0, 'a bad state must not be answered'
    # a state lacking a commanded joint gets the safe action (hold) at once: the gravity
    # torque with the missing joint at its last measured position, never silence or zero
    held = rig.exchange(missing_joint)
    expected = gravity(MODEL, q)[[ALL_JOINTS.index(j) for j in JOINTS]]
    assert max_abs_difference(held, expected) <= TOLERANCE
    rig.exchange(good)
    assert all(finite(c.data) for c in rig.commands)
    assert rig.process.alive()
    assert 'joint state ignored' in rig.process.log()


# ---------------------------------------------------------------------- trajectories, time

def test_trajectory_is_followed_and_a_bad_one_rejected(spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS)
    desired = ros_node.collect(JointState, f'/{NODE}/desired', RELIABLE_DEEP)
    trajectories = ros_node.node.create_publisher(JointTrajectory, f'/{NODE}/joint_trajectory', 10)
    ros_node.wait_for_subscribers(trajectories)
    ros_node.wait_for_publishers(f'/{NODE}/desired')
    state = joint_state(ALL_JOINTS, np.zeros(6), np.zeros(6))
    rig.exchange(state)

    target = [0.3, -0.2, 0.1, 0.25, -0.15, 0.05]       # in JOINTS order
    goal = JointTrajectory(joint_names=JOINTS)          # zero stamp: start now
    goal.points = [JointTrajectoryPoint(positions=target, time_from_start=Duration(
        sec=0, nanosec=300_000_000))]
    # The publisher counts the node as matched before the node has matched it back, and a
    # goal sent in between is lost: resend it until the node says it took one (the same goal
    # again only restarts the same motion).
    deadline = time.monotonic() + 10.0
    while 'trajectory accepted' not in rig.process.log():
        if time.monotonic() > deadline:
            pytest.fail(f'the goal was never accepted:\n{rig.process.log()[-3000:]}')
        trajectories.publish(goal)
        for _ in range(10):
            rig.states.publish(state)
            ros_node.spin_for(0.01)
    end = time.monotonic() + 0.8
    while time.monotonic() < end:                       # the arm does not move; the plan does
        rig.states.publish(state)
        ros_node.spin_for(0.01)
    ros_node.spin_for(0.1)
    assert desired[-1].name == JOINTS
    assert max_abs_difference(desired[-1].position, target) <= TOLERANCE
    assert max(abs(v) for v in desired[-1].velocity) <= TOLERANCE

    bad = JointTrajectory(joint_names=['no_such_joint'])
    bad.points = [JointTrajectoryPoint(positions=[1.0], time_from_start=Duration(sec=1))]
    trajectories.publish(bad)
    rig.process.wait_for_log('trajectory rejected', timeout=10)
    assert rig.process.alive()
    rig.exchange(state)


def test_tuning_topics_carry_the_command_parts(spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS)
    topics = ('desired', 'actual', 'error', 'feedforward', 'feedback')
    received = {t: ros_node.collect(JointState, f'/{NODE}/{t}', RELIABLE_DEEP) for t in topics}
    for topic in topics:
        ros_node.wait_for_publishers(f'/{NODE}/{topic}')
    # the node publishes tuning only while subscribed and re-checks that every 0.2 s
    ros_node.spin_for(0.5)
    rng = np.random.default_rng(15)
    first = shuffled_state(rng, ALL_JOINTS, *random_state(rng))
    second = shuffled_state(rng, ALL_JOINTS, *random_state(rng))
    second.header.stamp = Time(sec=42, nanosec=7)
    oracle = core('feedforward_pd')
    oracle.update(0.0, first.name, first.position, first.velocity)
    command = oracle.update(1.0, second.name, second.position, second.velocity)
    rig.exchange(first)
    tau = rig.exchange(second)
    ros_node.wait_for(lambda: all(len(received[t]) >= 2 for t in topics), 5, 'tuning messages')
    last = {t: received[t][-1] for t in topics}
    by_name = dict(zip(second.name, second.position))
    assert all(m.name == JOINTS for m in last.values())
    assert all((m.header.stamp.sec, m.header.stamp.nanosec) == (42, 7) for m in last.values())
    assert max_abs_difference(last['actual'].position, [by_name[j] for j in JOINTS]) == 0.0
    assert max_abs_difference(last['actual'].effort, tau) == 0.0
    assert max_abs_difference(last['desired'].position, command.desired_q) <= TOLERANCE
    assert max_abs_difference(last['error'].position, command.error) <= TOLERANCE
    assert max_abs_difference(last['feedforward'].effort, command.feedforward) <= TOLERANCE
    assert max_abs_difference(last['feedback'].effort, command.feedback) <= TOLERANCE
    # the parts are before clamping to the effort limits; the command after
    limit = np.asarray(MODEL.effort_limit)[[ALL_JOINTS.index(j) for j in JOINTS]]
    unclamped = np.add(last['feedforward'].effort, last['feedback'].effort)
    assert max_abs_difference(np.clip(unclamped, -limit, limit), tau) <= TOLERANCE


def test_use_sim_time_drives_stamps_and_the_watchdog_runs_on_the_steady_clock(
        spawn_node, ros_node):
    clock = ros_node.node.create_publisher(Clock, '/clock', 10)
    rig = start(spawn_node, ros_node, mode='gravity_compensation', joints=JOINTS,
                state_timeout=0.2, use_sim_time=True, handshake=False)
    actual = ros_node.collect(JointState, f'/{NODE}/actual', RELIABLE_DEEP)
    ros_node.wait_for_subscribers(clock)
    ros_node.wait_for_publishers(f'/{NODE}/actual')

    def tick(seconds):
        clock.publish(Clock(clock=Time(sec=int(seconds), nanosec=int(seconds % 1 * 1e9))))
        ros_node.spin_for(0.05)

    def node_runs_on_sim_time():
        tick(1000.0)
        rig.states.publish(PROBE)           # zero stamp: ~/actual gets the node's clock
        ros_node.spin_for(0.05)
        return any(m.header.stamp.sec == 1000 for m in actual)
    ros_node.wait_for(node_runs_on_sim_time, 20, 'an answer stamped with sim time')
    ros_node.spin_for(0.1)
    rig.commands.clear()
    actual.clear()

    state = joint_state(ALL_JOINTS, np.full(6, 0.2), np.zeros(6))
    rig.exchange(state)
    ros_node.wait_for(lambda: actual, 5, '~/actual')
    assert (actual[-1].header.stamp.sec, actual[-1].header.stamp.nanosec) == (1000, 0)

    count = len(rig.commands)
    # Sim time frozen and no states: the watchdog still engages, on the steady clock. A
    # simulator that dies stops /clock too; a watchdog on ROS time would never fire.
    ros_node.wait_for(lambda: len(rig.commands) > count, 3, 'the safe command, sim time frozen')


def two_joint_urdf():
    """Another robot: joints named unlike the default arm's."""
    link = ('<link name="{0}"><inertial><origin xyz="0.2 0 0"/><mass value="2"/><inertia'
            ' ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    joint = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
             '<origin xyz="{3} 0 0"/><axis xyz="0 1 0"/>'
             '<limit lower="-3" upper="3" effort="80" velocity="2"/></joint>')
    return ('<robot name="pendulum"><link name="base"/>'
            + link.format('upper') + link.format('lower')
            + joint.format('hip', 'base', 'upper', 0.0)
            + joint.format('knee', 'upper', 'lower', 0.4)
            + '</robot>')


def test_a_robot_with_other_joints_is_adopted_when_joints_is_not_set(spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='gravity_compensation')
    results = set_parameters(ros_node, NODE, {'robot_description': two_joint_urdf()})
    assert results['robot_description'].successful, results['robot_description'].reason
    rig.process.wait_for_log("model 'pendulum'", timeout=30)
    state = joint_state(['knee', 'hip'], np.array([0.3, -0.4]), np.zeros(2))

    def answered_for_two_joints():
        rig.states.publish(state)
        ros_node.spin_for(0.1)
        return any(len(command.data) == 2 for command in rig.commands)
    ros_node.wait_for(answered_for_two_joints, 10, 'an answer for the new robot')
    ros_node.spin_for(0.2)           # answers to the repeated states
    rig.commands.clear()
    expected = core('gravity_compensation', load_urdf(two_joint_urdf()), ['hip', 'knee'],
                    probed=False).update(0.0, state.name, state.position, state.velocity).tau
    assert max_abs_difference(rig.exchange(state), expected) <= TOLERANCE


def test_a_robot_without_the_configured_joints_is_refused(spawn_node, ros_node):
    rig = start(spawn_node, ros_node, mode='gravity_compensation', joints=JOINTS)
    results = set_parameters(ros_node, NODE, {'robot_description': two_joint_urdf()})
    assert not results['robot_description'].successful
    assert 'not moving joints' in results['robot_description'].reason
    assert rig.process.alive()


# ---------------------------------------------------------------------- rate

def fresh_diagnostics(ros_node, diagnostics):
    """The /diagnostics list once a message published from now on has arrived."""
    ros_node.spin_for(0.05)
    diagnostics.clear()
    ros_node.wait_for(lambda: diagnostics, 10, 'a fresh /diagnostics message')
    return diagnostics


def coalesced_so_far(diagnostics):
    """'states coalesced' of the newest /diagnostics message of the node."""
    status = [s for a in diagnostics for s in a.status if s.name == f'{NODE}: control loop'][-1]
    return int({kv.key: kv.value for kv in status.values}['states coalesced'])


@pytest.mark.wall_clock
def test_every_state_of_a_1khz_stream_from_another_process_is_answered_or_coalesced(
        spawn_node, ros_node):
    # A node that falls behind answers the newest queued state and counts the ones it
    # skipped (ros/controller/intake.py): no state may go missing without being counted.
    # 6000 states span 30 diagnostics periods and the node's garbage collections (15 s took
    # 9 s longer)
    duration = 6.0
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS, diagnostics_period=0.2)
    diagnostics = ros_node.collect(DiagnosticArray, '/diagnostics', 100)
    stream = spawn_node(
        STREAM_SCRIPT, node_name='state_stream',
        args=['--rate', '1000', '--duration', str(duration), '--names', *reversed(ALL_JOINTS),
              'extra_joint', '--handshake-topic', COMMANDS, '--ready-pause', '3.0'])

    def stream_ready():
        ros_node.spin_for(0.05)
        return 'ready' in stream.log()
    ros_node.wait_for(stream_ready, 30, 'the stream to be matched')
    # answers to its probes (a busy node may still be working through them); the stream
    # starts 3 s after 'ready'
    quiet_since, count = time.monotonic(), len(rig.commands)
    while time.monotonic() - quiet_since < 0.5:
        ros_node.spin_for(0.05)
        if len(rig.commands) != count:
            quiet_since, count = time.monotonic(), len(rig.commands)
    before = len(rig.commands)
    coalesced_before = coalesced_so_far(fresh_diagnostics(ros_node, diagnostics))
    # keep spinning meanwhile: the commands must be taken as they come
    ros_node.wait_for(lambda: not stream.alive(), duration + 30, 'the end of the stream')
    sent = int(stream.log().split('sent ')[1].split()[0])
    assert sent == int(1000 * duration)
    # until the answers stop (a backlog may still be draining), well before the watchdog
    # (CALM_TIMEOUT after the last state) adds safe commands
    quiet_since, count = time.monotonic(), len(rig.commands)
    while time.monotonic() - quiet_since < 1.0:
        ros_node.spin_for(0.05)
        if len(rig.commands) != count:
            quiet_since, count = time.monotonic(), len(rig.commands)
    answered = len(rig.commands) - before
    coalesced = coalesced_so_far(fresh_diagnostics(ros_node, diagnostics)) - coalesced_before
    assert answered + coalesced == sent, \
        f'{sent} states, {answered} commands, {coalesced} coalesced'
    print(f'{answered} of {sent} answered, {coalesced} coalesced')
    assert 'joint state ignored' not in rig.process.log()
    assert all(finite(c.data) for c in rig.commands[::97])


def test_states_the_node_cannot_date_are_answered_and_the_warning_is_counted_not_repeated(
        spawn_node, ros_node):
    # A node on sim time (no /clock yet) fed states stamped with wall time: it cannot tell
    # their age. It answers each and says so once, then once per period with a count
    # (control/throttle.py: a throttled rclpy log call on every state would cost a fifth of a
    # 1 kHz period).
    rate, duration = 500, 3.0
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS, max_state_age=0.5,
                use_sim_time=True)
    stream = spawn_node(
        STREAM_SCRIPT, node_name='state_stream',
        args=['--rate', str(rate), '--duration', str(duration), '--names', *ALL_JOINTS,
              '--handshake-topic', COMMANDS, '--ready-pause', '0.5'])
    ros_node.wait_for(lambda: not stream.alive(), duration + 60, 'the end of the stream')
    assert f'sent {int(rate * duration)}' in stream.log(), stream.log()

    def warnings():
        return [line for line in rig.process.log().splitlines() if 'not on the same clock' in line]

    def repeats():
        return sum(int(found.group(1)) for found in
                   (re.search(r'\(x (\d+) in the last', line) for line in warnings()) if found)
    # the repeats of the last period are counted once it has passed (LOG_PERIOD_S = 2 s)
    try:
        ros_node.wait_for(lambda: repeats() >= 0.5 * rate * duration, 10, 'the repeats counted')
    finally:
        print('\n'.join(warnings()) or rig.process.log()[-3000:])
    assert 'max_state_age cannot be checked' in warnings()[0], warnings()[0]
    assert len(warnings()) <= 2 + duration / 2.0, warnings()
    assert len(rig.commands) >= 0.5 * rate * duration
    assert all(finite(c.data) for c in rig.commands[::37])


def test_a_description_the_controller_cannot_use_is_refused_not_reported_as_set(
        spawn_node, ros_node):
    """It parses, but a zero effort limit cannot be torque-controlled: the set must fail
    with the reason, and the node keeps controlling the last good model."""
    rig = start(spawn_node, ros_node, mode='gravity_compensation')
    no_effort = URDF.replace('effort="80" velocity="3.0"', 'effort="0" velocity="3.0"')
    assert no_effort != URDF
    results = set_parameters(ros_node, NODE, {'robot_description': no_effort})
    assert not results['robot_description'].successful
    assert 'elbow' in results['robot_description'].reason, results['robot_description'].reason
    assert get_parameters(ros_node, NODE, ['robot_description'])['robot_description'] == URDF
    msg = shuffled_state(np.random.default_rng(12), ALL_JOINTS,
                         *random_state(np.random.default_rng(13)))
    expected = core('gravity_compensation', joints=ALL_JOINTS).update(
        0.0, msg.name, msg.position, msg.velocity).tau
    assert max_abs_difference(rig.exchange(msg), expected) <= TOLERANCE


@pytest.mark.parametrize('safe_action', ['hold', 'zero'])
def test_a_signal_leaves_the_safe_action_as_the_last_command(spawn_node, ros_node, safe_action):
    """A drive keeps the last command it got: on SIGINT the node publishes its safe action
    once more before it ends, gravity of the last pose ('hold') or zero ('zero'), not the
    tracking torque it answered the last state with."""
    rig = start(spawn_node, ros_node, mode='feedforward_pd', joints=JOINTS,
                safe_action=safe_action)
    q = np.array(PROBE.position) + 0.05   # off the held pose: the command has feedback
    tracking = rig.exchange(joint_state(ALL_JOINTS, q, np.zeros(len(ALL_JOINTS))))
    held = np.array([gravity(MODEL, q)[ALL_JOINTS.index(j)] for j in JOINTS])
    expected = held if safe_action == 'hold' else np.zeros(len(JOINTS))
    assert np.abs(tracking - expected).max() > 1.0
    before = len(rig.commands)
    assert rig.process.stop(10.0) == 0, rig.process.log()   # SIGINT
    ros_node.spin_for(0.5)
    assert len(rig.commands) == before + 1, 'one last command'
    np.testing.assert_allclose(rig.commands[-1].data, expected, atol=1e-9)
