"""rbd_control.client.ArmClient with real rclpy on both ends, no mocks.

The first test runs doc/examples/client_five_targets.py (no rclpy in it) as a subprocess against
rbd_mujoco_sim and rbd_controller in their own processes, in lock step: the script holds each
target for a span of the states' stamps, so a busy machine slows it down but does not change
what it measures. The others talk to a stand-in: a plain rclpy node named rbd_controller, in
a context and a thread of its own in this process, that answers the parameter services and
records every target message with its MessageInfo (the joint-target topics are read by
rbd_controller's joint_impedance; here only what the client publishes is checked).
"""
import functools
import math
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip('rclpy', reason='rclpy is not importable: source scripts/ros_env.sh')

from geometry_msgs.msg import PoseStamped  # noqa: E402
from rcl_interfaces.msg import SetParametersResult  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME  # noqa: E402
from rbd_control.client import ArmClient  # noqa: E402
from rbd_control.description import default_arm_urdf  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / 'doc' / 'examples' / 'client_five_targets.py'
JOINTS = list(DEFAULT_ARM_HOME)
Q = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6]
# the tool 0.7 m out: at the home pose it is 0.1 m from the shoulder_pan axis, near the shoulder
# singularity, where cartesian_impedance leaves targets across the arm ~1 cm short (the
# ROS-free core as well; doc/howto/client.md)
START = [0.0, 0.3, 1.2, -0.8, 1.2, 0.0]
STARTUP_S = 60.0   # the controller's first start may compile its dynamics kernels


# --- the script against the simulator and the controller ---------------------------------

def test_a_script_reaches_five_pose_targets_reading_states_at_100_hz(spawn_node, ros_env):
    urdf = default_arm_urdf()
    spawn_node('rbd_control.ros.simulator.node', {
        'joints': JOINTS, 'initial_positions': START,
        'lockstep': True, 'publish_clock': True, 'robot_description': urdf},
        node_name='rbd_mujoco_sim')
    controller = spawn_node('rbd_control.ros.controller.node', {
        'mode': 'gravity_compensation', 'joints': JOINTS, 'ee_link': 'tool0',
        'use_sim_time': True, 'safe_action': 'hold', 'robot_description': urdf,
        'state_timeout': 1.0})   # in lock step, as rbd_bringup --lockstep: the plant waits
    controller.wait_for_log("model 'rbd_arm'", STARTUP_S)
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(SCRIPT)], env=ros_env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    print(f'the script ran {time.monotonic() - started:.1f} s:\n{done.stdout}')
    assert done.returncode == 0, f'{done.stdout}{done.stderr[-3000:]}\n{controller.log()[-2000:]}'
    errors_mm = [float(x) for x in re.findall(r'reached within ([\d.]+) mm', done.stdout)]
    assert len(errors_mm) == 5 and max(errors_mm) < 5.0, errors_mm
    reads, seconds, new = re.search(r'read (\d+) states in ([\d.]+) s .*, (\d+) of them new',
                                    done.stdout).groups()
    rate = int(reads) / float(seconds)
    # a 10 ms sleep per read: ~100 per second, less only by a busy machine's late wake-ups
    assert rate > 50, f'{rate:.0f} reads per second'
    # each read a fresh state, nearly: the lockstep loop steps far faster than 100 Hz
    assert int(new) > 0.5 * int(reads), f'{new} new states in {reads} reads'


# --- a stand-in of the controller's interface ---------------------------------------------

class StandIn:
    """rbd_controller's parameters and target topics on a plain node, spun in its own thread;
    it publishes a joint state of `state_names` every 20 ms."""

    REFUSED_MODE = 'bogus'

    def __init__(self, namespace, joints, state_names=JOINTS):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('rbd_controller', namespace=namespace,
                                      context=self.context)
        # unset, as the controller's default: every moving joint of its URDF
        self.node.declare_parameter('joints', joints or Parameter.Type.STRING_ARRAY)
        self.node.declare_parameter('mode', 'gravity_compensation')
        self.node.declare_parameter('cartesian_stiffness', [1000.0] * 3 + [10.0] * 3)
        self.node.add_on_set_parameters_callback(self._on_set)
        self._heard = []   # (received ns, what, message or parameter value, MessageInfo)
        for kind, topic in ((JointState, 'target_joint_stiffness'),
                            (JointState, 'target_joint_state'), (PoseStamped, 'target_pose')):
            self.node.create_subscription(kind, f'~/{topic}',
                                          functools.partial(self._record, topic), 10)
        self.state = JointState(name=list(state_names), position=[0.0] * len(state_names))
        publisher = self.node.create_publisher(JointState, 'joint_states', 10)
        self.node.create_timer(0.02, lambda: publisher.publish(self.state))
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _record(self, topic, msg, info):
        self._heard.append((info['received_timestamp'], topic, msg, info))

    def _on_set(self, parameters):
        for p in parameters:
            if p.name == 'mode' and p.value == self.REFUSED_MODE:
                return SetParametersResult(successful=False, reason="mode 'bogus' is not one "
                                           "of the controller's modes")
        self._heard += [(time.time_ns(), p.name, p.value, None) for p in parameters]
        return SetParametersResult(successful=True)

    def wait_for(self, count, timeout=10.0):
        """[(what, message or value, MessageInfo or None)] in the order they arrived (the
        executor takes ready subscriptions in an order of its own), once `count` did."""
        end = time.monotonic() + timeout
        while len(self._heard) < count and time.monotonic() < end:
            time.sleep(0.01)
        return [entry[1:] for entry in sorted(self._heard, key=lambda entry: entry[0])]

    def close(self):
        self.executor.shutdown()
        self.thread.join()
        self.node.destroy_node()
        self.context.try_shutdown()


@pytest.fixture
def stand_in(ros_env):
    nodes = StandIn('left', JOINTS)
    yield nodes
    nodes.close()


# --- refusals, messages, closing -----------------------------------------------------------

def test_what_cannot_be_sent_is_refused_before_anything_goes_out(stand_in):
    for namespace in ('1bad', 'a b', 'left//arm'):
        with pytest.raises(ValueError, match=re.escape(repr(namespace))):
            ArmClient(namespace=namespace)
    with ArmClient(namespace='/left') as arm:
        refusals = {
            r"q: unknown joint names \['gripper'\]": lambda: arm.send_joint_target(
                {'elbow': 0.1, 'gripper': 0.2}),
            r'q has 5 values for the 6 joints': lambda: arm.send_joint_target(Q[:5]),
            r"q\['elbow'\] is nan: not finite": lambda: arm.send_joint_target(
                {'elbow': math.nan}),
            r'stiffness must not be negative': lambda: arm.send_joint_target(Q, stiffness=-1.0),
            r"stiffness must not be negative \(N m/rad\): \{'wrist_1': -5.0\}":
                lambda: arm.send_joint_target(Q, stiffness={'wrist_1': -5.0}),
            r'velocity names': lambda: arm.send_joint_target(Q, velocity={'elbow': 0.0}),
            r'quaternion .* has zero norm': lambda: arm.send_pose_target([0.4, 0, 0.5],
                                                                         [0, 0, 0, 0]),
            r'position needs 3 numbers, got 2': lambda: arm.send_pose_target([0.4, 0],
                                                                             [0, 0, 0, 1]),
            r"position\[2\] is inf: not finite": lambda: arm.send_pose_target(
                [0.4, 0, math.inf], [0, 0, 0, 1]),
            r'stiffness must be 6 positive numbers': lambda: arm.send_pose_target(
                [0.4, 0, 0.5], [0, 0, 0, 1], stiffness=[100.0] * 5 + [0.0]),
        }
        for reason, send in refusals.items():
            with pytest.raises(ValueError, match=reason):
                send()
        with pytest.raises(RuntimeError, match="refused mode = 'bogus': mode 'bogus' is not"):
            arm.set_mode('bogus')
        arm.set_mode('cartesian_impedance')
    assert [(what, value) for what, value, _ in stand_in.wait_for(1)] == [
        ('mode', 'cartesian_impedance')], 'something refused went out'
    with ArmClient(namespace='right', timeout=0.5) as arm:   # no controller there
        with pytest.raises(TimeoutError, match='/right/rbd_controller/get_parameters'):
            arm.mode()


def test_a_joint_target_goes_out_after_its_stiffness_as_published(stand_in):
    before = time.time()
    with ArmClient(namespace='left') as arm:
        assert arm.joint_names() == JOINTS
        arm.send_joint_target(Q, stiffness=50.0, velocity=[0.5] * 6)
        arm.send_joint_target({'elbow': 0.3}, stiffness={'elbow': 20.0})
        arm.send_joint_target(dict(zip(JOINTS, Q)))
        arm.send_pose_target([0.4, 0.1, 0.5], [0, 0, 0, 2], stiffness=[500.0] * 3 + [20.0] * 3)
        heard = stand_in.wait_for(7)
    assert [what for what, *_ in heard] == [
        'target_joint_stiffness', 'target_joint_state', 'target_joint_stiffness',
        'target_joint_state', 'target_joint_state', 'cartesian_stiffness', 'target_pose']
    stiffness, target = heard[0][1], heard[1][1]
    assert list(stiffness.name) == JOINTS and list(stiffness.position) == [50.0] * 6
    assert list(target.name) == JOINTS and list(target.position) == Q
    assert list(target.velocity) == [0.5] * 6 and list(target.effort) == []
    # received in that order (above), and published in it
    assert heard[0][2]['source_timestamp'] < heard[1][2]['source_timestamp']
    stamps = [msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec for _, msg, _ in heard
              if hasattr(msg, 'header')]
    assert before <= stamps[0] <= stamps[1] <= time.time()
    assert (list(heard[2][1].name), list(heard[2][1].position)) == (['elbow'], [20.0])
    assert (list(heard[3][1].name), list(heard[3][1].position)) == (['elbow'], [0.3])
    assert list(heard[3][1].velocity) == []
    assert list(heard[4][1].name) == JOINTS and list(heard[4][1].position) == Q
    assert list(heard[5][1]) == [500.0] * 3 + [20.0] * 3
    pose = heard[6][1]
    assert pose.header.frame_id == ''
    assert (pose.pose.position.x, pose.pose.position.y, pose.pose.position.z) == (0.4, 0.1, 0.5)
    o = pose.pose.orientation
    assert (o.x, o.y, o.z, o.w) == (0.0, 0.0, 0.0, 1.0)


def test_close_ends_the_thread_and_a_second_client_works(stand_in, ros_env):
    threads, default_context_up = set(threading.enumerate()), rclpy.ok()
    arm = ArmClient(namespace='left')
    assert arm.wait_for_state().name == JOINTS
    arm.close()
    arm.close()
    assert set(threading.enumerate()) == threads
    with pytest.raises(RuntimeError, match='closed'):
        arm.state()
    # a controller whose `joints` is empty commands every joint its states name
    everything = StandIn('right', [], state_names=JOINTS + ['gripper'])
    try:
        with ArmClient(namespace='right') as second:
            assert second.joint_names() == JOINTS + ['gripper']
            second.send_joint_target([0.0] * 7)
            assert everything.wait_for(1)[0][0] == 'target_joint_state'
    finally:
        everything.close()
    assert set(threading.enumerate()) == threads
    assert rclpy.ok() == default_context_up, 'the clients touched the default context'
