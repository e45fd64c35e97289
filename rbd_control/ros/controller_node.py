"""rbd_controller: the ROS 2 face of rbd_control.control.

Thin adapter: it turns parameters into a ControllerConfig, messages into calls of
the ROS-free Controller, and Commands into messages. The control law, the
trajectory handling and the watchdog's safe action all live in the core.

Topics
  in   robot_description        std_msgs/String, reliable + transient_local (used
                                 only while the robot_description parameter is empty)
  in   joint_states             sensor_msgs/JointState, matched by joint name
  in   ~/joint_trajectory       trajectory_msgs/JointTrajectory
  in   ~/target_pose ~/target_wrench   geometry_msgs PoseStamped / WrenchStamped
  out  ~/current_pose ~/desired_pose   geometry_msgs/PoseStamped (cartesian.py)
  out  <command_topic>          std_msgs/Float64MultiArray, one per joint state,
                                 in `joints` order (JointGroupEffortController input)
  out  ~/desired ~/actual ~/error ~/feedforward ~/feedback
                                 sensor_msgs/JointState in `joints` order (tuning.py)

Parameters: defined once in rbd_control/control/parameters.py (CONTROLLER_PARAMETERS);
rbd_control/ros/parameters.py turns the table into declarations and descriptors. The
model's lifecycle (description source, de-duplication, gravity override, joint adoption,
last good model) is the ROS-free ModelSource (rbd_control/control/model_source.py): a
robot_description or gravity set succeeds only once its model is built and in use.
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
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from rbd_control.control import Controller, ControllerConfig, StateError, TrajectoryError
from rbd_control.control.model_source import ModelRefused, ModelSource
from rbd_control.control.parameters import CONTROLLER_PARAMETERS, GAIN_FIELDS, gain_field, gain_name
from rbd_control.ros.cartesian import CartesianTopics, cartesian_config, mode_refusal
from rbd_control.ros.conversions import float_array, joint_state_arrays, seconds, trajectory_from_msg
from rbd_control.ros.parameters import ConfigurationError, declare, declare_per_joint, reasons, value
from rbd_control.ros.run import spin_node
from rbd_control.ros.qos import COMMAND_QOS, JOINT_STATE_QOS, ROBOT_DESCRIPTION_QOS
from rbd_control.ros.tuning import TuningPublisher

TABLE = CONTROLLER_PARAMETERS
# After the executor hands over one joint state, take at most this many more that are
# already queued: under a backlog each rclpy executor round trip (rebuilding its wait
# set) costs more than the control step, so draining the queue directly lets a busy
# node catch up; the cap keeps the watchdog timer and parameter services responsive.
MAX_STATES_PER_WAKEUP = 50
# Repeated per-message warnings at 1 kHz would drown the log.
WARN_PERIOD_S = 2.0
PARAMETER_SOURCE = 'the robot_description parameter'
TOPIC_SOURCE = 'the robot_description topic'

__all__ = ['ConfigurationError', 'ControllerNode', 'main']


class ControllerNode(Node):

    def __init__(self, **node_options):
        super().__init__('rbd_controller', **node_options)
        declare(self, TABLE)
        explicit = list(self._value('joints') or [])
        self._source = ModelSource(explicit, self._value('gravity') or (), build=self._build,
                                   strict=self._value('strict_model'))
        self._controller = None
        self._joints = frozenset(explicit) if explicit else None  # what gains.<joint> may name
        self._filled = set()            # gain parameters showing a model-derived default
        self._filling = False           # the node itself is setting those
        self._state_seen = False        # the watchdog guards a stream that has started
        self._last_stamp = None         # control time of the last answered state, and the
        self._last_arrival = None       # steady time it arrived (see _control_time)
        declare_per_joint(self, TABLE, explicit)

        self._command_msg = Float64MultiArray()
        self._command_pub = self.create_publisher(
            Float64MultiArray, self._value('command_topic'), COMMAND_QOS)
        self._tuning = TuningPublisher(self) if self._value('publish_tuning') else None
        self._cartesian = CartesianTopics(self, lambda: self._controller, self._control_time)

        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._source.parameter = self._value('robot_description')
        if self._source.parameter:
            self._load_description(self._source.parameter, PARAMETER_SOURCE)
        self.create_subscription(
            String, 'robot_description', self._on_robot_description, ROBOT_DESCRIPTION_QOS)
        self._joint_state_sub = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, JOINT_STATE_QOS)
        self.create_subscription(
            JointTrajectoryMsg, '~/joint_trajectory', self._on_trajectory, 10)
        self.create_timer(self._watchdog_period(), self._on_watchdog,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _value(self, name):
        return value(self, name)

    # ------------------------------------------------------------------ parameters

    def _validate_parameters(self, parameters):
        """Refuse a set with the reasons, or accept it; a new description or gravity is
        accepted only once its model is built, and is then already in use."""
        found = reasons(TABLE, parameters, self._joints, {'robot_description': lambda xml: None})
        by_name = {p.name: p.value for p in parameters}
        found += filter(None, [mode_refusal(by_name, self._value('ee_link'))])
        candidate = None
        if not found and ('robot_description' in by_name or 'gravity' in by_name):
            try:
                candidate = self._model_candidate(by_name)
            except ModelRefused as error:
                name = 'robot_description' if 'robot_description' in by_name else 'gravity'
                found.append(f'{name}: {error}')
        if found:
            return SetParametersResult(successful=False, reason='; '.join(found))
        if 'robot_description' in by_name:
            self._source.parameter = by_name['robot_description']
        if candidate is not None:
            source = PARAMETER_SOURCE if 'robot_description' in by_name else 'a gravity change'
            self._use(candidate, source, by_name.get('gravity'))
        elif 'gravity' in by_name:
            self._source.gravity = tuple(by_name['gravity'] or ())
        return SetParametersResult(successful=True)

    def _model_candidate(self, by_name):
        """The model a description and/or gravity set asks for; None when nothing changes."""
        gravity = by_name.get('gravity')
        xml = by_name.get('robot_description')
        if xml and not self._source.unchanged(xml):
            return self._source.parse(xml, PARAMETER_SOURCE, gravity)
        return None if gravity is None else self._source.regravitate(gravity)

    def _apply_parameters(self, parameters):
        try:
            self._apply_accepted(parameters)
        except Exception as error:   # validated already; never let the service thread die
            self.get_logger().error(
                f'could not apply {[p.name for p in parameters]}: {type(error).__name__}: {error}')

    def _apply_accepted(self, parameters):
        gains = {core: {} for core in GAIN_FIELDS.values()}
        for parameter in parameters:
            if parameter.name == 'mode' and self._controller is not None:
                self._controller.set_mode(parameter.value, self._control_time())
            elif parameter.name in ('robot_description', 'gravity') and self._controller is not None:
                self._show_gains()
            elif not self._filling and parameter.value is not None:
                gain = gain_field(parameter.name)
                if gain is not None:
                    self._filled.discard(parameter.name)
                    joint, core = gain
                    gains[core][joint] = parameter.value
        if self._controller is not None and any(gains.values()):
            self._controller.set_gains(**{core: v or None for core, v in gains.items()})

    def _config(self):
        """ControllerConfig from the parameters (gains: those with a value)."""
        value_ = self._value
        explicit = self._source.joints
        return ControllerConfig(
            mode=value_('mode'), joints=list(explicit) or None,
            **self._gain_values(explicit), effort_scale=value_('effort_scale'),
            state_timeout=value_('state_timeout'), safe_action=value_('safe_action'),
            damping=value_('damping'), allow_partial_joints_goal=value_('allow_partial_joints_goal'),
            **cartesian_config(value_))

    def _gain_values(self, joints, names=None):
        """{kp: {joint: value}, ...} of the gain parameters of `joints` that have a value
        (only those in `names`, when given)."""
        out = {}
        for field, core in GAIN_FIELDS.items():
            values = {j: self._value(gain_name(j, field)) for j in joints
                      if names is None or gain_name(j, field) in names}
            out[core] = {j: v for j, v in values.items() if v is not None} or None
        return out

    def _show_gains(self):
        """Declare the gains of new joints (applying values YAML/launch gave them) and show
        the model-derived defaults the core chose as parameter values, in one set."""
        joints = self._controller.joint_names
        try:
            declared = declare_per_joint(self, TABLE, joints)
        except ConfigurationError as error:
            self.get_logger().error(f'gain parameter refused: {error}')
            return
        given = self._gain_values(joints, set(declared))
        if any(given.values()):
            self._controller.set_gains(**given)
        fill = []
        for field, core in GAIN_FIELDS.items():
            for joint, gain in zip(joints, getattr(self._controller.gains, core)):
                name = gain_name(joint, field)
                if name in self._filled or self._value(name) is None:
                    fill.append(Parameter(name, Parameter.Type.DOUBLE, float(gain)))
        self._filled.update(p.name for p in fill)
        self._filling = True
        try:
            self.set_parameters(fill)
        finally:
            self._filling = False

    # ------------------------------------------------------------------ model

    def _build(self, model):
        """What the controller needs of a model (ModelSource's build step): the controller
        itself for the first model, then a ModelPlan for Controller.set_model."""
        if self._controller is None:
            return Controller(model, self._config())
        return self._controller.prepare_model(model)

    def _use(self, candidate, source, gravity=None):
        if not self._source.unchanged(candidate.xml):   # each description's warnings once
            for warning in candidate.urdf_model.warnings:
                self.get_logger().warning(f'robot {candidate.model.name!r}: {warning}')
        self._source.install(candidate, gravity)
        if isinstance(candidate.built, Controller):
            self._controller = candidate.built
        else:
            self._controller.set_model(candidate.built)
        self._joints = frozenset(self._controller.joint_names)
        self.get_logger().info(f'model {candidate.model.name!r} from {source}: '
                               f'controlling {len(self._joints)} joints')

    def _on_robot_description(self, msg):
        if self._source.topic_ignored():
            self.get_logger().info(
                'robot_description topic ignored: the robot_description parameter is set')
            return
        self._load_description(msg.data, TOPIC_SOURCE)

    def _load_description(self, xml, source):
        if self._source.unchanged(xml):
            # e.g. robot_state_publisher restarted: reloading would drop the trajectory
            self.get_logger().info(f'robot description from {source} unchanged')
            return
        try:
            candidate = self._source.parse(xml, source)
        except ModelRefused as error:
            keeping = 'keeping the previous model' if self._controller else \
                'no model yet, publishing nothing'
            self.get_logger().error(f'rejected robot description from {source}: {error} ({keeping})')
            return
        self._use(candidate, source)
        self._show_gains()

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
            if self._tuning is not None:
                self._tuning.publish(command, msg.header.stamp, names, q, qd)
            self._cartesian.publish(msg.header.stamp)

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
        limit = self._controller.effort_limit
        if tau.shape != limit.shape or not np.all(np.isfinite(tau)):
            self.get_logger().error(
                f'controller produced an unusable effort {tau!r}; nothing published',
                throttle_duration_sec=WARN_PERIOD_S)
            return False
        if np.any(np.abs(tau) > limit):
            # The core clamps; this is the last line of defence, so shout if it fires.
            self._warn(f'effort {tau} beyond the URDF limits {limit}; clamped')
            tau = np.clip(tau, -limit, limit)
        self._command_msg.data = float_array(tau)
        self._command_pub.publish(self._command_msg)
        return True

    def _watchdog_period(self):
        # Four checks per timeout: the safe action starts within 1.25 x state_timeout
        # of the last state at worst, and never waits more than 50 ms.
        return min(self._value('state_timeout') / 4.0, 0.05)

    def _warn(self, text):
        self.get_logger().warning(text, throttle_duration_sec=WARN_PERIOD_S)


def main(args=None):
    return spin_node('rbd_controller', ControllerNode, args)


if __name__ == '__main__':
    sys.exit(main())
