"""rbd_controller: the ROS 2 face of rbd_control.control.

Thin adapter: it turns parameters into a ControllerConfig, messages into calls of
the ROS-free Controller, and Commands into messages. The control law, the
trajectory handling and the watchdog's safe action all live in the core.

Topics
  in   robot_description        std_msgs/String, reliable + transient_local (used
                                 only while the robot_description parameter is empty)
  in   joint_states             sensor_msgs/JointState, matched by joint name
  in   ~/joint_trajectory       trajectory_msgs/JointTrajectory
  out  <command_topic>          std_msgs/Float64MultiArray, one per joint state,
                                 in `joints` order (JointGroupEffortController input)
  out  ~/desired ~/actual ~/error ~/feedforward ~/feedback
                                 sensor_msgs/JointState in `joints` order, stamped with
                                 the state's stamp: desired q/qd; actual q/qd + commanded
                                 effort; error q/qd; feedforward and feedback efforts
                                 (before clamping). JointState rather than
                                 Float64MultiArray because it names every value, so
                                 PlotJuggler labels curves by joint and aligns topics by
                                 stamp; rqt_plot reads /rbd_controller/error/position[1].

Parameters (rbd_control/ros/parameters.py has the descriptors and the checks)
  mode                 gravity_compensation | feedforward_pd | computed_torque  (runtime)
  gains.<joint>.{p,d,i,i_clamp}   unset: the core's model-derived default     (runtime)
  gravity              [x, y, z] override, empty: the model's                 (runtime)
  robot_description    URDF; empty: the topic                                 (runtime)
  joints, state_timeout, safe_action (hold | zero), effort_scale (0, 1], damping,
  command_topic, allow_partial_joints_goal, publish_tuning                    (start-up)
Before the first joint state nothing is published; after it, the watchdog publishes
the core's safe command while states are missing for longer than state_timeout.

Time: the controller runs on the joint states' header stamps (as ros2_control does), so
trajectories are sampled at the instant each state was measured, in sim time or wall time
alike, and never on a /clock message that arrived late. Between states that time advances
with the steady clock, and the watchdog runs on a steady timer: when a simulator dies, its
/clock stops too, and a watchdog on ROS time would never fire.
"""
import sys
import time

import numpy as np
import rclpy
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from rbd_control.control import Controller, ControllerConfig, StateError, TrajectoryError
from rbd_control.dynamics import load_urdf
from rbd_control.ros import parameters as params
from rbd_control.ros.conversions import (
    fill_joint_state, float_array, joint_state_arrays, seconds, trajectory_from_msg)

# joint_states may come at 1 kHz and every state is to be answered: the queues ride
# out a stall of the Python process (GC, a busy CPU) of up to a second. Depth does
# not add latency while the node keeps up; under sustained overload the watchdog
# cannot help either way, so a short queue would only drop states.
JOINT_STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
COMMAND_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
# As robot_state_publisher publishes it: a late subscriber still gets the last one.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Gain parameter -> the field of the core's Gains / ControllerConfig it sets.
GAIN_FIELD_TO_CORE = {'p': 'kp', 'd': 'kd', 'i': 'ki', 'i_clamp': 'i_clamp'}
# After the executor hands over one joint state, take at most this many more that are
# already queued: under a backlog each rclpy executor round trip (rebuilding its wait
# set) costs more than the control step, so draining the queue directly lets a busy
# node catch up; the cap keeps the watchdog timer and parameter services responsive.
MAX_STATES_PER_WAKEUP = 50
# Repeated per-message warnings at 1 kHz would drown the log.
WARN_PERIOD_S = 2.0


class ConfigurationError(RuntimeError):
    """A start-up parameter is unusable; the node cannot start."""


class ControllerNode(Node):

    def __init__(self, **node_options):
        super().__init__('rbd_controller', **node_options)
        self._declare_static_parameters()
        self._check_static_parameters()

        self._joints = list(self._value('joints') or [])
        self._model = None              # what the controller uses (gravity override applied)
        self._urdf_model = None         # as parsed, to re-apply another gravity override
        self._description = None        # the XML of the model in use
        self._controller = None
        self._effort_limit = None
        self._pending_model = None      # parsed in the set-callback, installed after it
        self._state_seen = False        # the watchdog guards a stream that has started
        self._state_names = None        # name order of the last joint state, and
        self._state_index = None        # where each of `joints` sits in it
        self._last_stamp = None         # control time of the last answered state, and the
        self._last_arrival = None       # steady time it arrived (see _control_time)
        if self._joints:
            self._declare_gain_parameters(self._joints)

        self._command_msg = Float64MultiArray()
        self._command_pub = self.create_publisher(
            Float64MultiArray, self._value('command_topic'), COMMAND_QOS)
        self._tuning_pubs = {}
        self._tuning_msgs = {}          # one reused JointState per tuning topic
        if self._value('publish_tuning'):
            # Without rclpy's default QoS-event handlers: each one is another entry in
            # the wait set the executor rebuilds for every joint state.
            quiet = PublisherEventCallbacks(use_default_callbacks=False)
            self._tuning_pubs = {
                topic: self.create_publisher(JointState, f'~/{topic}', 10, event_callbacks=quiet)
                for topic in ('desired', 'actual', 'error', 'feedforward', 'feedback')}

        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        description = self._value('robot_description')
        if description:
            self._load_description(description, 'the robot_description parameter')
        self.create_subscription(
            String, 'robot_description', self._on_robot_description, ROBOT_DESCRIPTION_QOS)
        self._joint_state_sub = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, JOINT_STATE_QOS)
        self.create_subscription(
            JointTrajectoryMsg, '~/joint_trajectory', self._on_trajectory, 10)
        self.create_timer(self._watchdog_period(), self._on_watchdog,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    # ------------------------------------------------------------------ parameters

    def _declare_static_parameters(self):
        defaults = {
            'robot_description': '',
            'mode': 'feedforward_pd',
            'joints': Parameter.Type.STRING_ARRAY,
            'state_timeout': 0.1,
            'effort_scale': 1.0,
            'gravity': Parameter.Type.DOUBLE_ARRAY,
            'command_topic': params.DEFAULT_COMMAND_TOPIC,
            'safe_action': 'hold',
            'damping': 0.0,
            'allow_partial_joints_goal': False,
            'publish_tuning': True,
        }
        for name, descriptor in params.static_descriptors().items():
            self.declare_parameter(name, defaults[name], descriptor)

    def _check_static_parameters(self):
        """Start-up values come from YAML/launch before any set-callback exists."""
        for name in params.static_descriptors():
            if name == 'robot_description':
                continue            # a bad description is logged, not fatal
            reason = params.validate(name, self._value(name), [])
            if reason:
                raise ConfigurationError(f'parameter {name}: {reason}')

    def _declare_gain_parameters(self, joints):
        """Declared without a value: unless YAML/launch sets one, a gain stays unset until
        the core has derived its default from the model (_fill_default_gains)."""
        for joint in joints:
            for field in params.GAIN_FIELDS:
                name = params.gain_parameter_name(joint, field)
                if self.has_parameter(name):
                    continue
                self.declare_parameter(
                    name, Parameter.Type.DOUBLE, params.gain_descriptor(joint, field))
                value = self._value(name)
                if value is not None and params.validate(name, value, joints):
                    raise ConfigurationError(params.validate(name, value, joints))

    def _value(self, name):
        """A parameter's value; None while it is declared without one."""
        parameter = self.get_parameter_or(name)
        return None if parameter is None else parameter.value

    def _gains(self, field, joints):
        """{joint: value} of the gain parameters that have a value."""
        values = {j: self._value(params.gain_parameter_name(j, field)) for j in joints}
        return {j: v for j, v in values.items() if v is not None}

    def _core_gains(self, joints=None):
        """Gain parameters as ControllerConfig / set_gains keyword arguments."""
        joints = self._joints if joints is None else joints
        return {core: self._gains(field, joints) for field, core in GAIN_FIELD_TO_CORE.items()}

    def _fill_default_gains(self):
        """Show the model-derived defaults the core chose as parameter values."""
        unset = []
        for field, core in GAIN_FIELD_TO_CORE.items():
            values = getattr(self._controller.gains, core)
            for joint, value in zip(self._joints, values):
                name = params.gain_parameter_name(joint, field)
                if self._value(name) is None:
                    unset.append(Parameter(name, Parameter.Type.DOUBLE, float(value)))
        if unset:
            self.set_parameters(unset)

    def _validate_parameters(self, parameters):
        reasons = []
        for parameter in parameters:
            if parameter.value is None:
                continue    # a gain being declared without a value (see _declare_gain_parameters)
            if parameter.name == 'robot_description':
                reason = self._check_description_parameter(parameter.value)
            else:
                reason = params.validate(parameter.name, parameter.value, self._joints)
            if reason:
                reasons.append(f'{parameter.name}: {reason}')
        if reasons:
            self._pending_model = None
            return SetParametersResult(successful=False, reason='; '.join(reasons))
        return SetParametersResult(successful=True)

    def _check_description_parameter(self, xml):
        if not xml:
            self._pending_model = None      # back to the topic; keep the current model
            return None
        model, reason = self._parse_model(xml)
        self._pending_model = model
        return reason

    def _apply_parameters(self, parameters):
        try:
            self._apply_accepted(parameters)
        except Exception as error:   # validated already; never let the service thread die
            self.get_logger().error(
                f'could not apply {[p.name for p in parameters]}: {type(error).__name__}: {error}')

    def _apply_accepted(self, parameters):
        gains_changed = False
        for parameter in parameters:
            if parameter.name == 'mode' and self._controller is not None:
                self._controller.set_mode(parameter.value, self._control_time())
            elif parameter.name == 'robot_description' and self._pending_model is not None:
                if self._install_model(self._pending_model, 'the robot_description parameter'):
                    self._description = parameter.value
                self._pending_model = None
            elif parameter.name == 'gravity' and self._urdf_model is not None:
                self._install_model(self._urdf_model, 'a gravity change', list(parameter.value))
            elif params.parse_gain_parameter_name(parameter.name):
                gains_changed = True
        if gains_changed and self._controller is not None:
            self._controller.set_gains(**self._core_gains())

    # ------------------------------------------------------------------ model

    def _on_robot_description(self, msg):
        if self._value('robot_description'):
            self.get_logger().info(
                'robot_description topic ignored: the robot_description parameter is set')
            return
        self._load_description(msg.data, 'the robot_description topic')

    def _load_description(self, xml, source):
        if self._model is not None and xml == self._description:
            # e.g. robot_state_publisher restarted: reloading would drop the trajectory
            self.get_logger().info(f'robot description from {source} unchanged')
            return
        model, reason = self._parse_model(xml)
        if model is None:
            keeping = 'keeping the previous model' if self._model else 'no model yet, publishing nothing'
            self.get_logger().error(f'rejected robot description from {source}: {reason} ({keeping})')
            return
        if self._install_model(model, source):
            self._description = xml

    def _parse_model(self, xml):
        """(model, None) for a usable description, else (None, reason)."""
        try:
            model = load_urdf(xml)
        except Exception as error:  # urdf_parser_py raises more than ModelError on bad XML
            return None, f'{type(error).__name__}: {error}'
        # An explicit `joints` list must exist in every model; without one the node follows
        # whatever robot the description describes.
        missing = [j for j in self._value('joints') or [] if j not in model.joint_names]
        if missing:
            return None, f'joints {missing} are not moving joints of robot {model.name!r}'
        return model, None

    def _with_gravity_override(self, model, gravity=None):
        gravity = self._value('gravity') if gravity is None else gravity
        return model.with_gravity(np.asarray(gravity, dtype=float)) if len(gravity or []) else model

    def _install_model(self, urdf_model, source, gravity=None):
        """Hand a parsed model (URDF gravity) to the controller; keep the old one on failure."""
        model = self._with_gravity_override(urdf_model, gravity)
        try:
            if self._controller is None or not set(self._joints) <= set(model.joint_names):
                # first model, or another robot: command all its joints from now on
                self._joints = list(self._value('joints') or [])
                self._controller = self._create_controller(model)
                self._state_names = None
                self._tuning_msgs = {}
            else:
                self._controller.set_model(model)
                self._controller.set_gains(**self._core_gains())  # set_model restores config gains
        except Exception as error:
            self.get_logger().error(f'cannot use the model from {source}: {error}')
            return False
        self._model = model
        self._urdf_model = urdf_model
        index = [model.joint_names.index(j) for j in self._joints]
        self._effort_limit = np.asarray(model.effort_limit)[index]
        self._fill_default_gains()
        self.get_logger().info(
            f'model {model.name!r} from {source}: controlling {len(self._joints)} joints')
        return True

    def _create_controller(self, model):
        """The first usable model fixes the joints (all moving ones unless `joints` is set)."""
        joints = self._joints or list(model.joint_names)
        self._declare_gain_parameters(joints)
        value = self._value
        config = ControllerConfig(
            mode=value('mode'),
            joints=list(joints),
            **self._core_gains(joints),
            effort_scale=value('effort_scale'),
            state_timeout=value('state_timeout'),
            safe_action=value('safe_action'),
            damping=value('damping'),
            allow_partial_joints_goal=value('allow_partial_joints_goal'),
        )
        controller = Controller(model, config)
        self._joints = joints
        return controller

    # ------------------------------------------------------------------ control

    def _now(self):
        return self.get_clock().now().nanoseconds * 1e-9

    def _control_time(self):
        """The controller's time: the stamp of the last answered joint state advanced by the
        steady time since it arrived; the node clock before the first state."""
        if self._last_stamp is None:
            return self._now()
        return self._last_stamp + (time.monotonic() - self._last_arrival)

    def _on_joint_state(self, msg):
        self._answer_joint_state(msg)
        for _ in range(MAX_STATES_PER_WAKEUP):
            queued = self._take_queued_joint_state()
            if queued is None:
                return
            self._answer_joint_state(queued)

    def _take_queued_joint_state(self):
        """The next joint state already in the subscription's queue, or None."""
        handle = self._joint_state_sub.handle
        with handle:
            taken = handle.take_message(JointState, False)
        return None if taken is None else taken[0]

    def _answer_joint_state(self, msg):
        if self._controller is None:
            return
        names, q, qd = joint_state_arrays(msg)
        now = seconds(msg.header.stamp) or self._now()     # an unstamped state: the node clock
        try:
            command = self._controller.update(now, names, q, qd if qd is not None else np.empty(0))
        except StateError as error:
            self._warn(f'joint state ignored: {error}')
            return
        except Exception as error:  # a control node that dies drops the arm
            self.get_logger().error(
                f'controller failed on a joint state: {type(error).__name__}: {error}',
                throttle_duration_sec=WARN_PERIOD_S)
            return
        self._state_seen = True
        self._last_stamp, self._last_arrival = now, time.monotonic()
        if self._publish_command(command):
            self._publish_tuning(command, msg.header.stamp, names, q, qd)

    def _on_watchdog(self):
        if self._controller is None or not self._state_seen:
            return
        try:
            command = self._controller.check_watchdog(self._control_time())
        except Exception as error:
            self.get_logger().error(f'watchdog failed: {type(error).__name__}: {error}',
                                    throttle_duration_sec=WARN_PERIOD_S)
            return
        if command is not None:
            self._publish_command(command)

    def _on_trajectory(self, msg):
        if self._controller is None:
            self._warn('trajectory ignored: no robot model yet')
            return
        now = self._control_time()
        try:
            self._controller.set_trajectory(trajectory_from_msg(msg, now), now)
        except TrajectoryError as error:
            self.get_logger().warning(f'trajectory rejected: {error}')
        except Exception as error:
            self.get_logger().error(f'trajectory rejected: {type(error).__name__}: {error}')

    def _publish_command(self, command):
        """Publish command.tau unless it is unfit to reach a motor. True when published."""
        tau = np.asarray(command.tau, dtype=np.float64)
        if tau.shape != self._effort_limit.shape or not np.all(np.isfinite(tau)):
            self.get_logger().error(
                f'controller produced an unusable effort {tau!r}; nothing published',
                throttle_duration_sec=WARN_PERIOD_S)
            return False
        if np.any(np.abs(tau) > self._effort_limit):
            # The core clamps; this is the last line of defence, so shout if it fires.
            self._warn(f'effort {tau} beyond the URDF limits {self._effort_limit}; clamped')
            tau = np.clip(tau, -self._effort_limit, self._effort_limit)
        self._command_msg.data = float_array(tau)
        self._command_pub.publish(self._command_msg)
        return True

    def _publish_tuning(self, command, state_stamp, names, q, qd):
        if not self._tuning_pubs:
            return
        stamp = state_stamp if (state_stamp.sec or state_stamp.nanosec) else \
            self.get_clock().now().to_msg()
        actual_q, actual_qd = self._in_joint_order(names, q), self._in_joint_order(names, qd)
        self._publish_joint_state('desired', stamp, command.desired_q, command.desired_qd)
        self._publish_joint_state('actual', stamp, actual_q, actual_qd, command.tau)
        self._publish_joint_state(
            'error', stamp, command.error, np.asarray(command.desired_qd) - actual_qd)
        self._publish_joint_state('feedforward', stamp, effort=command.feedforward)
        self._publish_joint_state('feedback', stamp, effort=command.feedback)

    def _publish_joint_state(self, topic, stamp, position=(), velocity=(), effort=()):
        # Reusing the message saves re-validating the joint names at 1 kHz.
        msg = self._tuning_msgs.get(topic)
        if msg is None:
            msg = self._tuning_msgs[topic] = JointState(name=list(self._joints))
        fill_joint_state(msg, stamp, position, velocity, effort)
        self._tuning_pubs[topic].publish(msg)

    def _in_joint_order(self, names, values):
        """The state's values in `joints` order, for plotting next to the command.
        (The core does its own matching; this only reorders what it accepted.)"""
        if tuple(names) != self._state_names:
            self._state_names = tuple(names)
            self._state_index = [self._state_names.index(j) for j in self._joints]
        return np.asarray(values)[self._state_index]

    def _watchdog_period(self):
        # Four checks per timeout: the safe action starts within 1.25 x state_timeout
        # of the last state at worst, and never waits more than 50 ms.
        return min(self._value('state_timeout') / 4.0, 0.05)

    def _warn(self, text):
        self.get_logger().warning(text, throttle_duration_sec=WARN_PERIOD_S)


def main(args=None):
    rclpy.init(args=args)
    try:
        node = ControllerNode()
    except ConfigurationError as error:
        print(f'rbd_controller: {error}', file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
