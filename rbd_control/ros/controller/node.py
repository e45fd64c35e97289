"""rbd_controller: the ROS 2 face of rbd_control.control.

Thin adapter: it turns parameters into a ControllerConfig (ControllerConfig.from_parameters),
messages into calls of the ROS-free Controller, and Commands into messages. The control law,
the trajectory handling and the watchdog's safe action all live in the core. Its parts (one
module each, below) share one ControllerContext (context.py), handed to each explicitly.

Topics (relative or private, so `-r __ns:=/left` moves them all; /diagnostics and, on sim
time, /clock stay absolute: rbd_control/bringup/namespaces.py)
  in   robot_description        std_msgs/String, reliable + transient_local (used
                                 only while the robot_description parameter is empty)
  in   joint_states             sensor_msgs/JointState, matched by joint name
  in   ~/joint_trajectory       trajectory_msgs/JointTrajectory
  in   ~/target_pose ~/target_wrench   geometry_msgs PoseStamped / WrenchStamped
  in   ~/target_joint_state ~/target_joint_stiffness   sensor_msgs/JointState
                                 (joint_impedance: joint_targets.py)
  out  ~/current_pose ~/desired_pose   geometry_msgs/PoseStamped (cartesian.py)
  action ~/follow_joint_trajectory  control_msgs/action/FollowJointTrajectory, and
  out  ~/controller_state       control_msgs/msg/JointTrajectoryControllerState
                                 (trajectory_action.py; off without control_msgs)
  out  <command_topic>          std_msgs/Float64MultiArray, one per joint state answered
                                 (after a stall, the newest queued one: intake.py,
                                 state_path.py),
                                 in `joints` order (JointGroupEffortController input)
  out  ~/desired ~/actual ~/error ~/feedforward ~/feedback
                                 sensor_msgs/JointState in `joints` order (tuning.py)
  out  /diagnostics             diagnostic_msgs/DiagnosticArray, loop health (diagnostics.py)
  out  ~/external_torque ~/external_wrench ~/contact_state, srv ~/reset_collision
                                 contact awareness (controller/contact.py, contact.enabled)

Parameters: defined once in rbd_control/params/controller.py (CONTROLLER_PARAMETERS);
rbd_control/ros/parameter_binding.py turns the table into declarations and descriptors. The
model's lifecycle (description source, de-duplication, gravity override, joint adoption,
last good model) is the ROS-free ModelSource (rbd_control/control/model/source.py): a
robot_description or gravity set succeeds only once its model is built and in use.
Before the first joint state nothing is published; after it, the watchdog publishes
the core's safe command while states are missing for longer than state_timeout.

Threads: the joint states are taken by their own thread (state_loop.StateLoop, started by
run.spin_node; `--executor single_threaded` leaves them to the executor) and answered by
state_path.py; the executor serves parameters, timers, services, the action server and the
other topics; parameter_callbacks.py validates and applies sets. All share the controller
under the node's lock.

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
import sys
import threading
import time

from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.errors import ConfigError
from rbd_control.control.model.prepass import DescriptionPrepass
from rbd_control.control.model.source import ModelRefused, ModelSource
from rbd_control.control.safety.health import HealthThresholds, LoopHealth
from rbd_control.params.controller import CONTROLLER_PARAMETERS
from rbd_control.ros.controller import trajectory_action
from rbd_control.ros.controller.cartesian import CartesianTopics
from rbd_control.ros.controller.joint_targets import JointTargetTopics
from rbd_control.ros.controller.contact import ContactTopics
from rbd_control.ros.controller.context import ControllerContext
from rbd_control.ros.controller.corrections import ModelCorrections
from rbd_control.ros.controller.diagnostics import DiagnosticsPublisher
from rbd_control.ros.controller.guarded_inputs import GuardedInputs
from rbd_control.ros.controller.heavy_inputs import Keepalive
from rbd_control.ros.controller.intake import clock_loop
from rbd_control.ros.controller.parameter_callbacks import PARAMETER_SOURCE, ParameterCallbacks
from rbd_control.ros.controller.shadow import ShadowTopics
from rbd_control.ros.controller.state_path import StatePath
from rbd_control.ros.controller.tuning import TuningPublisher
from rbd_control.ros.parameter_binding import ConfigurationError, declare, declare_per_joint, value
from rbd_control.ros.run import spin_node

TABLE = CONTROLLER_PARAMETERS

__all__ = ['ConfigurationError', 'ControllerNode', 'main']


class ControllerNode(Node):

    def __init__(self, **node_options):
        super().__init__('rbd_controller', **node_options)
        declare(self, TABLE)
        explicit = list(self._value('joints') or [])
        prepass = DescriptionPrepass()
        prepass.start()   # its imports take seconds: not when the first large model arrives
        source = ModelSource(explicit, self._value('gravity') or (), build=self._build,
                             strict=self._value('strict_model'), prepass=prepass)
        # what the parts share (context.py; not `_context`: rclpy's Node has one): the
        # controller, used under one lock by the state loop's thread (state_path.py), the
        # executor thread and, while that one is stuck, by the keepalive's watchdog;
        # gains.<joint> may name the joints given, then the model's
        self._shared = context = ControllerContext(
            self, self._value, source, threading.RLock(), self._loop_health(),
            joints=frozenset(explicit) if explicit else None)
        self._watchdog_beat = time.monotonic()
        self._states = None             # StatePath, below; the keepalive may run before it
        declare_per_joint(self, TABLE, explicit)

        self._tuning = TuningPublisher(self) if self._value('publish_tuning') else None
        # friction.*, payload.*, ~/payload; a payload moves the default gains shown
        self._corrections = ModelCorrections(
            self, context, lambda: self._parameter_sets.show_derived_gains())
        # ~/follow_joint_trajectory and ~/controller_state (None without control_msgs)
        self._action = trajectory_action.attach(self, context)
        self._cartesian = CartesianTopics(self, context)
        # ~/target_joint_state, ~/target_joint_stiffness (mode joint_impedance)
        JointTargetTopics(self, context)
        # ~/external_torque, ~/external_wrench, ~/contact_state, ~/reset_collision
        self._contact = ContactTopics(self, context)
        # mode shadow: ~/shadow_effort, ~/model_error (and nothing on command_topic)
        self._shadow = ShadowTopics(self, context)

        # runtime sets; gains shown as parameters
        self._parameter_sets = ParameterCallbacks(self, context, self._corrections, self._use)
        self.add_on_set_parameters_callback(self._parameter_sets.validate)
        self.add_post_set_parameters_callback(self._parameter_sets.apply)

        source.parameter = self._value('robot_description')
        if source.parameter:
            self._load_description(source.parameter, PARAMETER_SOURCE)
        # robot_description and ~/joint_trajectory: bounded, read beside the control loop
        self._inputs = GuardedInputs(self, context, self._action, self._adopt)
        # joint_states -> command_topic; its StateLoop is started by run.spin_node
        self._states = StatePath(self, context, self._value('command_topic'),
                                 tuning=self._tuning, cartesian=self._cartesian,
                                 contact=self._contact, action=self._action,
                                 shadow=self._shadow)
        self.state_loop = self._states.loop
        self.clock_loop = clock_loop(self, self._clock_loop_failed)   # on sim time
        # runs the watchdog when the executor has not for two periods (heavy_inputs.py);
        # started once the state path it publishes through exists
        self._keepalive = Keepalive(self._watchdog_period(), self._run_watchdog,
                                    lambda: self._watchdog_beat, self._keepalive_failed)
        self._keepalive.start()
        self.create_timer(self._watchdog_period(), self._on_watchdog,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        if self._value('diagnostics_period') > 0:
            DiagnosticsPublisher(self, context, self._value('diagnostics_period'),
                                 extra=lambda: (self._contact.diagnostics()
                                                + self._shadow.diagnostics()))
        # Everything built so far (rclpy, numba, the model) lives as long as the node: out of
        # the cyclic collector's sight, a full collection triggered by a burst of message
        # objects (a 40,000-name state) no longer walks it all while holding the GIL.
        gc.freeze()

    def _value(self, name):
        return value(self, name)

    # ------------------------------------------------------------------ parameters

    def _config(self):
        """ControllerConfig from the parameters (gains: those given a value)."""
        given = self._parameter_sets.given_gain_values(self._shared.source.joints)
        return ControllerConfig.from_parameters(self._value, gains=given)

    def _loop_health(self):
        try:
            return LoopHealth(HealthThresholds(**TABLE.read(self._value, HealthThresholds,
                                                            'diagnostics')))
        except ConfigError as error:
            raise ConfigurationError(f'parameter diagnostics.{error}') from None

    # ------------------------------------------------------------------ model

    def _build(self, model):
        """What the controller needs of a model (ModelSource's build step): the controller
        itself for the first model, then a ModelPlan for Controller.set_model."""
        controller = self._shared.controller
        if controller is None:
            return Controller(model, self._config())
        return controller.prepare_model(model)

    def _use(self, candidate, source, gravity=None):
        """Put a parsed model in use (ModelSource.install), under the lock."""
        context = self._shared
        if not context.source.unchanged(candidate.xml):   # each description's warnings once
            for warning in candidate.urdf_model.warnings:
                self.get_logger().warning(f'robot {candidate.model.name!r}: {warning}')
        context.source.install(candidate, gravity)
        context.model_warnings = tuple(candidate.urdf_model.warnings)
        if isinstance(candidate.built, Controller):
            context.controller = candidate.built
        else:
            context.controller.set_model(candidate.built)
        context.joints = frozenset(context.controller.joint_names)
        context.health.model_refused('')
        self.get_logger().info(f'model {candidate.model.name!r} from {source}: '
                               f'controlling {len(context.joints)} joints')

    def _load_description(self, xml, source):
        if self._shared.source.unchanged(xml):
            # e.g. robot_state_publisher restarted: reloading would drop the trajectory
            self.get_logger().info(f'robot description from {source} unchanged')
            return
        try:
            candidate = self._shared.source.parse(xml, source)
        except ModelRefused as error:
            keeping = 'keeping the previous model' if self._shared.controller else \
                'no model yet, publishing nothing'
            if self._shared.controller is None:   # /diagnostics says why nothing is commanded
                self._shared.health.model_refused(f'description refused: {error}')
            self.get_logger().error(
                f'rejected robot description from {source}: {error} ({keeping})')
            return
        self._adopt(candidate, source)

    def _adopt(self, candidate, source):
        """Use a model and show its gains (a new description from the parameter or the topic)."""
        with self._shared.lock:
            self._use(candidate, source)
            self._parameter_sets.show_gains()

    # ------------------------------------------------------------------ control

    def _on_watchdog(self):
        self._watchdog_beat = time.monotonic()
        self._run_watchdog()
        self._shared.log_due(self._shared.control_time())

    def _run_watchdog(self):
        """The watchdog's check; also run by the keepalive thread when the executor is stuck."""
        context = self._shared
        with context.lock:
            controller = context.controller
            if controller is None or self._states is None or not self._states.seen:
                return
            try:
                command = controller.check_watchdog(context.control_time())
            except Exception as error:
                context.errors.warn('watchdog_failed',
                                    f'watchdog failed: {type(error).__name__}: {error}')
                return
            if command is not None:
                context.health.watchdog_tripped()
                refusal = self._states.refusal    # states arrive, but each one is refused
                timeout = f'over state_timeout ({self._value("state_timeout"):g} s)'
                missing = (f'every joint state refused for {timeout}, the last: {refusal};'
                           if refusal else f'no joint state for {timeout}:')
                context.warnings.warn('watchdog', f'{missing} trajectory aborted, safe action '
                                      f'{self._value("safe_action")!r}')
                self._states.publish(command)

    def last_command(self):
        """The process ends (SIGINT, SIGTERM, its parent's death: ros/run.py): the safe
        action's command, published once, since a drive keeps the last command it got
        (ros2_control's JointGroupEffortController does): 'hold' leaves the gravity torque of
        the last pose, not a tracking torque; 'zero' leaves none."""
        context = self._shared
        with context.lock:
            controller = context.controller
            if controller is None or self._states is None or not self._states.seen:
                return
            command = controller.check_watchdog(context.control_time(), stopping=True)
            if command is not None:
                self._states.publish(command)

    def _keepalive_failed(self, error):
        self._shared.errors.warn('keepalive_failed',
                                 f'keepalive watchdog failed: {type(error).__name__}: {error}')

    def _clock_loop_failed(self, error):
        self._shared.errors.warn('clock_loop', f'/clock loop: {type(error).__name__}: {error}')

    def destroy_node(self):
        if self.clock_loop is not None:   # first: nothing else waits on it
            self.clock_loop.stop()
        self.state_loop.stop()
        self._keepalive.stop()
        self._inputs.close()
        if self._action is not None:
            self._action.close()
        self._shared.source.close()
        return super().destroy_node()

    def _watchdog_period(self):
        # Four checks per timeout: the safe action starts within 1.25 x state_timeout
        # of the last state at worst, and never waits more than 50 ms.
        return min(self._value('state_timeout') / 4.0, 0.05)


def main(args=None):
    return spin_node('rbd_controller', ControllerNode, args)


if __name__ == '__main__':
    sys.exit(main())
