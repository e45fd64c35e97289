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
  action ~/follow_joint_trajectory  control_msgs/action/FollowJointTrajectory, and
  out  ~/controller_state       control_msgs/msg/JointTrajectoryControllerState
                                 (trajectory_action.py; off without control_msgs)
  out  <command_topic>          std_msgs/Float64MultiArray, one per joint state answered
                                 (after a stall, the newest queued one: intake.py),
                                 in `joints` order (JointGroupEffortController input)
  out  ~/desired ~/actual ~/error ~/feedforward ~/feedback
                                 sensor_msgs/JointState in `joints` order (tuning.py)
  out  /diagnostics             diagnostic_msgs/DiagnosticArray, loop health (diagnostics.py)

Parameters: defined once in rbd_control/control/parameters.py (CONTROLLER_PARAMETERS);
rbd_control/ros/parameters.py turns the table into declarations and descriptors. The
model's lifecycle (description source, de-duplication, gravity override, joint adoption,
last good model) is the ROS-free ModelSource (rbd_control/control/model_source.py): a
robot_description or gravity set succeeds only once its model is built and in use.
Before the first joint state nothing is published; after it, the watchdog publishes
the core's safe command while states are missing for longer than state_timeout.

Hostile or huge input (guarded_inputs.py, heavy_inputs.py): trajectories and descriptions
are bounded in bytes and read beside the control loop; a joint state with more than
MAX_STATE_JOINTS names is refused before it is mapped; a keepalive thread runs the watchdog
when the executor is stuck; repeated refusals are logged once per period with a count.

Time: the controller runs on the joint states' header stamps (as ros2_control does), so
trajectories are sampled at the instant each state was measured, in sim time or wall time
alike, and never on a /clock message that arrived late. Between states that time advances
with the steady clock, and the watchdog runs on a steady timer: when a simulator dies, its
/clock stops too, and a watchdog on ROS time would never fire.
"""
import gc
import math
import sys
import threading
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.control import ConfigError, Controller, ControllerConfig, StateError
from rbd_control.control.health import HealthThresholds, LoopHealth
from rbd_control.control.model_source import ModelRefused, ModelSource
from rbd_control.control.parameters import (CONTROLLER_PARAMETERS, GAIN_FIELDS, fixed_positions,
                                            gain_field, gain_name)
from rbd_control.ros.conversions import float_array, joint_state_arrays, seconds
from rbd_control.ros.diagnostics import DiagnosticsPublisher
from rbd_control.ros.intake import state_age, take_newest
from rbd_control.ros.cartesian import CartesianTopics, cartesian_config, mode_refusal
from rbd_control.ros.parameters import ConfigurationError, declare, declare_per_joint, reasons, value
from rbd_control.ros.run import spin_node
from rbd_control.ros.qos import COMMAND_QOS, JOINT_STATE_QOS
from rbd_control.ros.model_corrections import ModelCorrections
from rbd_control.ros import trajectory_action
from rbd_control.ros.tuning import TuningPublisher
from rbd_control.control.description_prepass import DescriptionPrepass
from rbd_control.ros.guarded_inputs import GuardedInputs
from rbd_control.ros.heavy_inputs import MAX_STATE_JOINTS, too_big

TABLE = CONTROLLER_PARAMETERS
# Repeated per-message warnings at 1 kHz would drown the log.
WARN_PERIOD_S = 2.0
PARAMETER_SOURCE = 'the robot_description parameter'

__all__ = ['ConfigurationError', 'ControllerNode', 'main']


class ControllerNode(Node):

    def __init__(self, **node_options):
        super().__init__('rbd_controller', **node_options)
        declare(self, TABLE)
        explicit = list(self._value('joints') or [])
        prepass = DescriptionPrepass()
        prepass.start()   # its imports take seconds: not when the first large model arrives
        self._source = ModelSource(explicit, self._value('gravity') or (), build=self._build,
                                   strict=self._value('strict_model'), prepass=prepass)
        # the controller is used by the executor thread and, while that one is stuck, by the
        # keepalive's watchdog (guarded_inputs.py)
        self._lock = threading.RLock()
        self._watchdog_beat = time.monotonic()
        self._controller = None
        self._joints = frozenset(explicit) if explicit else None  # what gains.<joint> may name
        self._filled = set()            # gain parameters showing a model-derived default
        self._filling = False           # the node itself is setting those
        self._state_seen = False        # the watchdog guards a stream that has started
        self._last_stamp = None         # control time of the last answered state, and the
        self._last_arrival = None       # steady time it arrived (see _control_time)
        self._model_warnings = ()       # load warnings of the model in use
        self._guard_events = (0, 0)     # age-guard episodes and overloads already logged
        declare_per_joint(self, TABLE, explicit)
        self._health = self._loop_health()

        self._command_msg = Float64MultiArray()
        self._command_pub = self.create_publisher(
            Float64MultiArray, self._value('command_topic'), COMMAND_QOS)
        self._tuning = TuningPublisher(self) if self._value('publish_tuning') else None
        self._corrections = ModelCorrections(self, self._value)   # friction.*, payload.*
        # ~/follow_joint_trajectory and ~/controller_state (None without control_msgs)
        self._action = trajectory_action.attach(
            self, lambda: self._controller, self._control_time, self._value)
        self._cartesian = CartesianTopics(self, lambda: self._controller, self._control_time)

        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._source.parameter = self._value('robot_description')
        if self._source.parameter:
            self._load_description(self._source.parameter, PARAMETER_SOURCE)
        # robot_description and ~/joint_trajectory: bounded, read beside the control loop
        self._inputs = GuardedInputs(self)
        self._joint_state_sub = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, JOINT_STATE_QOS)
        self.create_timer(self._watchdog_period(), self._on_watchdog,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        if self._value('diagnostics_period') > 0:
            DiagnosticsPublisher(self, self._loop_report, self._value('diagnostics_period'))
        # Everything built so far (rclpy, numba, the model) lives as long as the node: out of
        # the cyclic collector's sight, a full collection triggered by a burst of message
        # objects (a 40,000-name state) no longer walks it all while holding the GIL.
        gc.freeze()

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
            with self._lock:
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
            with self._lock:
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
        names = [p.name for p in parameters]
        if self._controller is not None and self._corrections.concerns(names):
            self._corrections.apply(self._controller, names)

    def _config(self):
        """ControllerConfig from the parameters (gains: those with a value)."""
        value_ = self._value
        explicit = self._source.joints
        return ControllerConfig(
            mode=value_('mode'), joints=list(explicit) or None,
            **self._gain_values(explicit), effort_scale=value_('effort_scale'),
            state_timeout=value_('state_timeout'), safe_action=value_('safe_action'),
            damping=value_('damping'), allow_partial_joints_goal=value_('allow_partial_joints_goal'),
            fixed_positions=fixed_positions(value_('fixed_positions')),
            allow_nonzero_velocity_at_trajectory_end=value_('allow_nonzero_velocity_at_trajectory_end'),
            max_state_age=value_('max_state_age'),
            **cartesian_config(value_))

    def _loop_health(self):
        thresholds = HealthThresholds(**{
            field: self._value(f'diagnostics.{field}')
            for field in ('state_age_warn', 'state_age_error', 'compute_warn', 'compute_error')})
        try:
            return LoopHealth(thresholds)
        except ConfigError as error:
            raise ConfigurationError(f'parameter diagnostics.{error}') from None

    def _loop_report(self):
        """(HealthReport, robot name) for /diagnostics."""
        guard = self._controller.age_guard if self._controller is not None else None
        name = self._controller.model.name if self._controller is not None else ''
        return self._health.report(time.monotonic(), self._model_warnings, guard), name

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
        self._corrections.apply(self._controller)

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
        self._model_warnings = tuple(candidate.urdf_model.warnings)
        if isinstance(candidate.built, Controller):
            self._controller = candidate.built
        else:
            self._controller.set_model(candidate.built)
        self._joints = frozenset(self._controller.joint_names)
        self.get_logger().info(f'model {candidate.model.name!r} from {source}: '
                               f'controlling {len(self._joints)} joints')

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
        self._adopt(candidate, source)

    def _adopt(self, candidate, source):
        with self._lock:
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

    def _on_joint_state(self, msg, info):
        with self._lock:
            newest, info, skipped = take_newest(self._joint_state_sub, JointState, msg, info)
            self._health.coalesced(skipped, time.monotonic())
            # On sim time only the stamps count: a lockstep simulator waits for the answer, so
            # wall-clock latency costs it nothing (intake.state_age).
            published = (0.0 if self.get_clock().ros_time_is_active
                         else info.get('source_timestamp', 0) * 1e-9)
            self._answer_joint_state(newest, published)

    def _answer_joint_state(self, msg, published=0.0):
        """published: when the state was published (wall clock, s); 0 if unknown."""
        if self._controller is None:
            return
        started = time.perf_counter()
        reason = too_big('joint state', len(msg.name), MAX_STATE_JOINTS, 'names')
        if reason:   # refused before the names are mapped
            self._inputs.warnings.warn('state_size', reason)
            return
        names, q, qd = joint_state_arrays(msg)
        stamp = seconds(msg.header.stamp)
        node_now = self._now()
        now = stamp or node_now                            # an unstamped state: the node clock
        age = state_age(node_now, stamp, time.time(), published)
        if age is None and (stamp or published):
            self._warn(f'joint state stamped {node_now - stamp:.3g} s from this node\'s clock: '
                       'not on the same clock; max_state_age cannot be checked')
        try:
            command = self._controller.update(
                now, names, q, qd if qd is not None else np.empty(0), age=age)
        except StateError as error:
            self._health.rejected_state()
            self._inputs.warnings.warn('state_ignored', f'joint state ignored: {error}')
            return
        except Exception as error:  # a control node that dies drops the arm
            self.get_logger().error(
                f'controller failed on a joint state: {type(error).__name__}: {error}',
                throttle_duration_sec=WARN_PERIOD_S)
            return
        self._state_seen = True
        self._last_stamp, self._last_arrival = now, time.monotonic()
        guard = self._controller.age_guard
        if (guard.events, guard.overloads) != self._guard_events:
            self._log_age_guard(guard, age)
        published = self._publish_command(command)
        self._health.record(self._last_arrival, math.nan if age is None else age,
                            time.perf_counter() - started)
        self._health.clamped(command.saturated, command.joint_names, self._last_arrival)
        if not published:
            return
        # a safe command for a state lacking commanded joints has no "actual" to show
        if self._tuning is not None and not command.reason:
            self._tuning.publish(command, msg.header.stamp, names, q, qd)
        self._cartesian.publish(msg.header.stamp)
        if self._action is not None:
            try:
                self._action.on_command(now, command, msg.header.stamp)
            except Exception as error:  # the action's bookkeeping must never stop the loop
                self.get_logger().error(
                    f'action server failed on a command: {type(error).__name__}: {error}',
                    throttle_duration_sec=WARN_PERIOD_S)

    def _log_age_guard(self, guard, age):
        """One line per episode of late states, one more if it turns into an overload."""
        late = (f'joint state {age * 1e3:.1f} ms old (max_state_age '
                f'{guard.max_state_age * 1e3:g} ms)')
        if guard.overloads != self._guard_events[1]:
            self.get_logger().warning(
                f'{late}: states late for {guard.overload_time:g} s, trajectory aborted, holding '
                f'with softened gains until states are fresh for {guard.recovery_time:g} s')
        else:
            self.get_logger().info(
                f'{late}: feedback softened until states are fresh for {guard.recovery_time:g} s')
        self._guard_events = (guard.events, guard.overloads)

    def _on_watchdog(self):
        self._watchdog_beat = time.monotonic()
        self._run_watchdog()
        self._inputs.log_due(self._control_time())

    def _run_watchdog(self):
        """The watchdog's check; also run by the keepalive thread when the executor is stuck."""
        with self._lock:
            if self._controller is None or not self._state_seen:
                return
            try:
                command = self._controller.check_watchdog(self._control_time())
            except Exception as error:
                self.get_logger().error(f'watchdog failed: {type(error).__name__}: {error}',
                                        throttle_duration_sec=WARN_PERIOD_S)
                return
            if command is not None:
                self._health.watchdog_tripped()
                self._publish_command(command)

    def destroy_node(self):
        self._inputs.close()
        self._source.close()
        return super().destroy_node()

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
