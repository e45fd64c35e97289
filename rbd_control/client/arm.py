"""ArmClient: rbd_controller's targets and the arm's state from plain Python, no ROS knowledge
needed (a notebook, a script, a gymnasium env's step).

One client owns an rclpy context of its own, so it runs beside any other rclpy use in the
process (the default context is never touched, and no signal handler is installed: Ctrl-C
stays a KeyboardInterrupt in the caller's code). It has two nodes:

- the talker, spun by a SingleThreadedExecutor in a daemon thread: the publishers of the
  targets and the clients of the controller's parameter services (their replies need a spin);
- the reader, which no executor spins: its joint_states and ~/current_pose subscriptions keep
  only the newest message, taken when state() or tool_pose() asks. An executor wakes up for
  every message: a process watching two 1 kHz topics that way spent a third of a core on it
  (rbd_control/ros/drained.py); a policy reading at 100 Hz pays for 100 takes a second.

Topics, for namespace ns and controller c:
  in   <ns>/joint_states               sensor_msgs/JointState
  in   <ns>/<c>/current_pose           geometry_msgs/PoseStamped (cartesian_impedance only)
  out  <ns>/<c>/target_joint_stiffness sensor_msgs/JointState, position = K in N m/rad
  out  <ns>/<c>/target_joint_state     sensor_msgs/JointState: name, position (, velocity)
  out  <ns>/<c>/target_pose            geometry_msgs/PoseStamped, frame_id '' (the base)
and the parameter services <ns>/<c>/get_parameters and <ns>/<c>/set_parameters.
"""
import atexit
import itertools
import math
import numbers
import os
import re
import threading
import time
from collections.abc import Mapping

import rclpy
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.duration import Duration
from rclpy.executors import (ExternalShutdownException, ShutdownException,
                             SingleThreadedExecutor)
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

# targets: a burst of them is queued, not dropped
TARGET_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
# states: only the newest matters; best effort matches a reliable or a best-effort publisher
NEWEST_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
ACK_WAIT_S = 1.0       # at most, per publisher, in close()
POLL_S = 0.002          # how often a wait looks again: well below a 100 Hz policy's period
NAME_PART = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_instances = itertools.count()   # each client's nodes get names of their own


def ros_path(text, what):
    """'' or '/' -> ''; 'left' or '/left' -> '/left'; 'robots/left' -> '/robots/left'.
    ValueError naming `text` unless each part is a ROS name (letters, digits, underscores,
    not starting with a digit), the parts separated by single '/'."""
    if not isinstance(text, str):
        raise ValueError(f'{what} {text!r} is not a string')
    body = text[1:] if text.startswith('/') else text
    if not body:
        return ''
    for part in body.split('/'):
        if not part:
            raise ValueError(f"{what} {text!r} is not a ROS name: it has an empty part (a '/' "
                             f"doubled or at the end)")
        if not NAME_PART.fullmatch(part):
            raise ValueError(
                f"{what} {text!r} is not a ROS name: {part!r} must start with a letter or an "
                f"underscore and hold only letters, digits and underscores")
    return '/' + body


def finite_number(value, what):
    """float(value), or ValueError saying `what` is not a finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f'{what} is {value!r}: not a number') from None
    if not math.isfinite(number):
        raise ValueError(f'{what} is {number}: not finite')
    return number


def finite_vector(values, size, what):
    """`size` finite floats from a sequence (a list, a tuple, a numpy array)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, '__len__'):
        raise ValueError(f'{what} must be a sequence of {size} numbers, not {values!r}')
    if len(values) != size:
        raise ValueError(f'{what} needs {size} numbers, got {len(values)}')
    return [finite_number(v, f'{what}[{i}]') for i, v in enumerate(values)]


class ArmClient:
    """rbd_controller's targets and the arm's state, from plain Python.

    ArmClient(namespace='', controller='rbd_controller', timeout=10.0): namespace is a ROS
    namespace ('', 'left', '/left'), controller the controller node's name in it, timeout the
    seconds any wait (a service, a first state, a first subscriber) takes at most before
    TimeoutError. close() it, or use `with ArmClient() as arm:`.
    """

    def __init__(self, namespace='', controller='rbd_controller', timeout=10.0):
        ns = ros_path(namespace, 'namespace')
        self._controller = ns + ros_path(controller, 'controller')
        if self._controller == ns:
            raise ValueError('controller must name the controller node, not be empty')
        self._timeout = finite_number(timeout, 'timeout')
        if self._timeout <= 0:
            raise ValueError(f'timeout is {timeout}: it must be positive (seconds)')
        self._open = False
        self._context = rclpy.Context()
        rclpy.init(args=[], context=self._context,
                   signal_handler_options=SignalHandlerOptions.NO)
        try:
            self._start(ns, f'arm_client_{os.getpid()}_{next(_instances)}')
        except BaseException:
            self._context.try_shutdown()
            raise
        self._open = True
        # an interpreter that ends with the client open stops the thread before Python is torn
        # down under it
        atexit.register(self.close)

    def _start(self, ns, name):
        """The two nodes, their subscriptions, publishers and service clients, and the
        executor's thread."""
        # no parameter services of their own: the reader is never spun, so it could not
        # answer them, and the talker has nothing to tune
        self._talker = rclpy.create_node(name, context=self._context,
                                         start_parameter_services=False)
        self._reader = rclpy.create_node(f'{name}_reader', context=self._context,
                                         start_parameter_services=False)
        self._states = self._reader.create_subscription(
            JointState, f'{ns}/joint_states', lambda msg: None, NEWEST_QOS)
        self._poses = self._reader.create_subscription(
            PoseStamped, f'{self._controller}/current_pose', lambda msg: None, NEWEST_QOS)
        self._state = self._pose = None
        self._take_lock = threading.Lock()
        self._stiffness_pub = self._talker.create_publisher(
            JointState, f'{self._controller}/target_joint_stiffness', TARGET_QOS)
        self._joint_pub = self._talker.create_publisher(
            JointState, f'{self._controller}/target_joint_state', TARGET_QOS)
        self._pose_pub = self._talker.create_publisher(
            PoseStamped, f'{self._controller}/target_pose', TARGET_QOS)
        self._get = self._talker.create_client(
            GetParameters, f'{self._controller}/get_parameters')
        self._set = self._talker.create_client(
            SetParameters, f'{self._controller}/set_parameters')
        self._joints = None   # the controller's `joints` parameter, once read
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._talker)
        self._thread = threading.Thread(target=self._spin, name=name, daemon=True)
        self._thread.start()

    def _spin(self):
        try:
            self._executor.spin()
        except (ShutdownException, ExternalShutdownException):
            pass   # close() ends the spin; nothing is left to do

    # --- state ------------------------------------------------------------------------

    def state(self):
        """The newest sensor_msgs/JointState received on <ns>/joint_states, None before the
        first."""
        self._state = self._take(self._states, self._state)
        return self._state

    def wait_for_state(self, timeout=None):
        """state(), waiting for the first one; TimeoutError after `timeout` seconds (default:
        the client's timeout)."""
        return self._wait_for(self.state, timeout, f'no joint state on {self._states.topic_name}')

    def tool_pose(self):
        """The newest geometry_msgs/PoseStamped of the controller's ~/current_pose (ee_link's
        origin in the base frame), None before the first: the controller publishes it only
        in cartesian_impedance."""
        self._pose = self._take(self._poses, self._pose)
        return self._pose

    def wait_for_tool_pose(self, timeout=None):
        """tool_pose(), waiting for the first one; TimeoutError after `timeout` seconds."""
        return self._wait_for(self.tool_pose, timeout,
                              f'no pose on {self._poses.topic_name} (is the mode '
                              f'cartesian_impedance?)')

    def _take(self, subscription, last):
        """The message queued on `subscription` (its depth is 1: the newest), else `last`."""
        self._check_open()
        with self._take_lock, subscription.handle:
            taken = subscription.handle.take_message(subscription.msg_type, False)
        return last if taken is None else taken[0]

    # --- the controller's parameters ----------------------------------------------------

    def joint_names(self):
        """The controller's commanded joints: its `joints` parameter (read once), or, where
        that is empty (every moving joint of its URDF), the names of the newest state."""
        if self._joints is None:
            self._joints = list(self._get_parameter('joints') or [])
        return list(self._joints) or list(self.wait_for_state().name)

    def mode(self):
        """The controller's `mode` parameter (gravity_compensation, cartesian_impedance ...)."""
        return self._get_parameter('mode')

    def set_mode(self, mode):
        """Switch the controller's law (its `mode` parameter); RuntimeError with the node's
        reason if it refuses (an unknown mode, cartesian_impedance without ee_link)."""
        if not isinstance(mode, str):
            raise ValueError(f'mode must be a string, not {mode!r}')
        self._set_parameter('mode', mode)

    def _get_parameter(self, name):
        response = self._call(self._get, GetParameters.Request(names=[name]))
        return parameter_value_to_python(response.values[0]) if response.values else None

    def _set_parameter(self, name, value):
        request = SetParameters.Request(parameters=[Parameter(name, value=value)
                                                    .to_parameter_msg()])
        result = self._call(self._set, request).results[0]
        if not result.successful:
            raise RuntimeError(f'{self._controller} refused {name} = {value!r}: '
                               f'{result.reason}')

    def _call(self, client, request):
        """The service's reply; TimeoutError naming the service if it is not there or does not
        answer within the client's timeout."""
        self._check_open()
        deadline = time.monotonic() + self._timeout
        self._wait_for(client.service_is_ready, self._timeout,
                       f'service {client.service_name} is not available (is the controller '
                       f'running, in this namespace?)')
        response = client.call(request, timeout_sec=max(deadline - time.monotonic(), POLL_S))
        if response is None:
            raise TimeoutError(f'service {client.service_name} did not answer within '
                               f'{self._timeout} s')
        return response

    # --- targets -----------------------------------------------------------------------

    def send_joint_target(self, q, stiffness=None, velocity=None):
        """Joint positions to move to (rad, m), for the controller's joint_impedance mode.

        q: a dict {joint: position} (any of joint_names()) or a sequence in joint_names()
        order. velocity (optional): the same, for the same joints as q. stiffness (optional,
        N m/rad): one number for every joint of q, a dict, or a sequence like q; if given it
        goes out first, on target_joint_stiffness (JointState, position = K), so that the
        target is tracked with it. Everything is checked before anything is published:
        ValueError for an unknown joint, a wrong length, a value not finite, a negative K."""
        target = self._per_joint(q, 'q')
        if not target:
            raise ValueError('q names no joint')
        velocities = None
        if velocity is not None:
            velocities = self._per_joint(velocity, 'velocity')
            if set(velocities) != set(target):
                raise ValueError(f'velocity names {sorted(velocities)} but q names '
                                 f'{sorted(target)}: give one velocity per joint of q')
        gains = None
        if stiffness is not None:
            gains = self._per_joint(stiffness, 'stiffness', every=list(target))
            negative = {name: k for name, k in gains.items() if k < 0}
            if negative:
                raise ValueError(f'stiffness must not be negative (N m/rad): {negative}')
        if gains is not None:
            self._publish(self._stiffness_pub, self._joint_state(gains))
        msg = self._joint_state(target)
        if velocities is not None:
            msg.velocity = [velocities[name] for name in target]
        self._publish(self._joint_pub, msg)

    def _per_joint(self, values, what, every=None):
        """{joint: finite float} from a dict or a sequence in joint_names() order (or, with
        `every`, one number for each of those joints); ValueError saying what is wrong."""
        if every is not None and isinstance(values, numbers.Real):
            return {name: finite_number(values, f'{what}[{name!r}]') for name in every}
        known = self.joint_names()
        if isinstance(values, Mapping):
            unknown = [name for name in values if name not in known]
            if unknown:
                raise ValueError(f'{what}: unknown joint names {unknown}; the controller '
                                 f'commands {known}')
            names = list(values)
        else:
            if isinstance(values, (str, bytes)) or not hasattr(values, '__len__'):
                raise ValueError(f'{what} must be a dict {{joint: value}} or a sequence in '
                                 f'joint_names() order, not {values!r}')
            if len(values) != len(known):
                raise ValueError(f'{what} has {len(values)} values for the {len(known)} '
                                 f'joints {known}')
            names, values = known, dict(zip(known, values))
        return {name: finite_number(values[name], f'{what}[{name!r}]') for name in names}

    def send_pose_target(self, position, quaternion, stiffness=None):
        """Move ee_link's origin to `position` (x, y, z in m, base frame) with orientation
        `quaternion` (x, y, z, w; normalised here), in cartesian_impedance. stiffness
        (optional): 6 positive numbers, N/m along x, y, z then N m/rad about them, set as the
        controller's cartesian_stiffness first (RuntimeError with its reason if refused)."""
        p = finite_vector(position, 3, 'position')
        quat = finite_vector(quaternion, 4, 'quaternion')
        norm = math.sqrt(sum(x * x for x in quat))
        if norm < 1e-9:
            raise ValueError(f'quaternion {quat} (x, y, z, w) has zero norm: it is no rotation')
        if stiffness is not None:
            gains = finite_vector(stiffness, 6, 'stiffness')
            if min(gains) <= 0:
                raise ValueError(f'stiffness must be 6 positive numbers, got {gains}')
            self._set_parameter('cartesian_stiffness', gains)
        msg = PoseStamped()
        msg.header.stamp = self._talker.get_clock().now().to_msg()
        msg.header.frame_id = ''   # the controller's base (the URDF root link)
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = p
        o = msg.pose.orientation
        o.x, o.y, o.z, o.w = (x / norm for x in quat)
        self._publish(self._pose_pub, msg)

    def _joint_state(self, values):
        msg = JointState()
        msg.header.stamp = self._talker.get_clock().now().to_msg()
        msg.name = list(values)
        msg.position = list(values.values())
        return msg

    def _publish(self, publisher, msg):
        """Publish once someone listens: a target sent right after the client starts would
        otherwise go out before discovery has matched the controller, and be lost."""
        self._check_open()
        if publisher.get_subscription_count() == 0:
            self._wait_for(publisher.get_subscription_count, self._timeout,
                           f'nothing subscribes to {publisher.topic_name} (is the controller '
                           f'running, in this namespace, and does it take these targets?)')
        publisher.publish(msg)

    # --- waiting and closing -----------------------------------------------------------

    def _wait_for(self, get, timeout, failure):
        """get()'s first truthy value, looked for every POLL_S; TimeoutError(failure ...)."""
        timeout = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while not (value := get()):
            if time.monotonic() > deadline:
                raise TimeoutError(f'{failure}: waited {timeout} s')
            time.sleep(POLL_S)
        return value

    def _check_open(self):
        if not self._open:
            raise RuntimeError('this ArmClient is closed')

    def close(self):
        """Stop the executor thread, destroy the nodes, shut the context down. Idempotent."""
        if not self._open:
            return
        self._open = False
        atexit.unregister(self.close)
        # what was published reaches the controller before the process may end: a script's
        # last target would otherwise be lost with it (a silent subscriber holds this 1 s)
        for publisher in (self._stiffness_pub, self._joint_pub, self._pose_pub):
            publisher.wait_for_all_acked(Duration(seconds=min(self._timeout, ACK_WAIT_S)))
        self._executor.shutdown(timeout_sec=self._timeout)
        self._thread.join(self._timeout)
        self._talker.destroy_node()
        self._reader.destroy_node()
        self._context.try_shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
