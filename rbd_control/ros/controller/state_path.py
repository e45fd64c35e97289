"""rbd_controller's state path: a joint state in, one effort command out.

    state_loop.StateLoop (or the executor) ->  StatePath.on_joint_state   (the newest queued state
                                            of those within the size bound: take_newest)
      -> answer: arrays without copies, control time, age (intake.state_age)
      -> Controller.update  ->  publish (finite, sized, within the URDF limits)
      -> the feature hooks: tuning topics, ~/current_pose, the action server, loop health

Everything runs under the node's lock (the executor's callbacks and the keepalive's watchdog
share the controller; context.py). Per state it allocates only what the core returns: the
command message is one reused Float64MultiArray, the clock and the hooks are looked up once.
"""
import math
import time

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.control import StateError
from rbd_control.ros.controller.heavy_inputs import MAX_STATE_JOINTS, too_big
from rbd_control.ros.controller.intake import state_age, take_newest
from rbd_control.ros.conversions import float_array, joint_state_arrays, seconds
from rbd_control.ros.qos import COMMAND_QOS, JOINT_STATE_QOS
from rbd_control.ros.state_loop import StateLoop

__all__ = ['StatePath']


class StatePath:
    """Answers the joint states of one ControllerNode: the ControllerContext (controller,
    lock, health, warnings; it sets context.anchor, the control time's), and the feature hooks
    run after each published command (None: that feature is off)."""

    def __init__(self, node, context, command_topic, *, tuning=None, cartesian=None,
                 contact=None, action=None, shadow=None):
        self._context = context
        self._shadow = shadow      # ShadowTopics: mode shadow's topics (shadow.py)
        self._tuning, self._cartesian, self._contact, self._action = (
            tuning, cartesian, contact, action)
        self.seen = False          # the watchdog guards a stream that has started
        # why the last state was refused, '' once a state is answered: the watchdog says it
        # instead of "no joint state" while refused states keep arriving (written here, read
        # on the executor's thread: one str assignment)
        self.refusal = ''
        self._guard_events = (0, 0)   # age-guard episodes and overloads already logged
        self._clock = node.get_clock()
        self._logger = node.get_logger()
        self._msg = Float64MultiArray()
        self._last_good = None     # the last effort published (the fallback of an unusable one)
        self._publisher = node.create_publisher(Float64MultiArray, command_topic, COMMAND_QOS)
        self.loop = StateLoop(
            lambda group: node.create_subscription(JointState, 'joint_states', self.on_joint_state,
                                                   JOINT_STATE_QOS, callback_group=group),
            JointState, self.on_joint_state, node.context, self._loop_failed)

    def on_joint_state(self, msg, info):
        with self._context.lock:
            newest, info, skipped = take_newest(self.loop.subscription, JointState, msg, info,
                                                self._too_big)
            if newest is None:
                return
            self._context.health.coalesced(skipped, time.monotonic())
            # On sim time only the stamps count: a lockstep simulator waits for the answer, so
            # wall-clock latency costs it nothing (intake.state_age).
            published = (0.0 if self._clock.ros_time_is_active
                         else info.get('source_timestamp', 0) * 1e-9)
            self._answer(newest, published)

    def _too_big(self, msg):
        """Refuse a state by its name count before the names are mapped (take_newest)."""
        reason = too_big('joint state', len(msg.name), MAX_STATE_JOINTS, 'names')
        if reason:
            self.warn('state_size', reason)
        return reason is not None

    def _answer(self, msg, published):
        """published: when the state was published (wall clock, s); 0 if unknown."""
        context = self._context
        controller = context.controller
        if controller is None:   # /diagnostics: ERROR, states arrive but nothing is commanded
            context.health.state_without_model(time.monotonic())
            return
        started = time.perf_counter()
        names, q, qd = joint_state_arrays(msg)
        header_stamp = msg.header.stamp
        stamp = seconds(header_stamp)
        # Clock.now() without building a Time per state
        node_now = self._clock.handle.get_now().nanoseconds * 1e-9
        now = stamp or node_now                            # an unstamped state: the node clock
        age = state_age(node_now, stamp, time.time(), published)
        if age is None and (stamp or published):
            self.warn('state_clock', f'joint state stamped {node_now - stamp:.3g} s from this '
                      'node\'s clock: not on the same clock; max_state_age cannot be checked')
        guard = controller.age_guard
        tracking = controller.trajectory_end_time is not None   # before an overload aborts it
        try:
            command = controller.update(
                now, names, q, qd if qd is not None else np.empty(0), age=age, effort=msg.effort)
        except StateError as error:
            context.health.rejected_state()
            context.warnings.warn('state_ignored', f'joint state ignored: {error}')
            self.refusal = str(error)
            return
        except Exception as error:  # a control node that dies drops the arm
            self.error('controller_failed',
                       f'controller failed on a joint state: {type(error).__name__}: {error}')
            return
        self.seen = True
        self.refusal = ''
        arrival = time.monotonic()
        # one tuple: the executor's thread reads it (context.control_time) while this one writes
        context.anchor = (now, arrival)
        if (guard.events, guard.overloads) != self._guard_events:
            self._log_age_guard(guard, age, tracking)
        published = self.publish(command)
        context.health.record(arrival, math.nan if age is None else age,
                              time.perf_counter() - started)
        context.health.clamped(command.saturated, command.joint_names, arrival)
        if published:
            self._hooks(now, command, header_stamp, names, q, qd)
            if self._shadow is not None:
                self._shadow.publish(now, command, header_stamp, names, msg.effort)

    def _hooks(self, now, command, stamp, names, q, qd):
        # a safe command for a state lacking commanded joints has no "actual" to show
        if self._tuning is not None and not command.reason:
            self._tuning.publish(command, stamp, names, q, qd)
        if self._cartesian is not None:
            self._cartesian.publish(stamp)
        if self._contact is not None:
            self._contact.publish(command, stamp)
        if self._action is not None:
            try:
                self._action.on_command(now, command, stamp)
            except Exception as error:  # the action's bookkeeping must never stop the loop
                self.error('action_failed',
                           f'action server failed on a command: {type(error).__name__}: {error}')

    def publish(self, command):
        """Publish command.tau, clamped to the URDF limits; a tau unfit to reach a motor (not
        finite, mis-sized) is replaced by the last good one (zero effort before any), so the
        plant is never left without a command. True when command.tau itself was published.
        In shadow mode nothing is published, a safe action's command neither: True for the
        shadow command (its hooks run), False for any other."""
        if self._context.controller.mode == 'shadow':
            return command.mode == 'shadow'
        tau = np.asarray(command.tau, dtype=np.float64)
        limit = self._context.controller.effort_limit
        usable = True
        # one comparison in the common case (NaN fails <= too); the reason only when it fails
        if tau.shape != limit.shape or not (np.abs(tau) <= limit).all():
            if tau.shape != limit.shape or not np.isfinite(tau).all():
                last = self._last_good
                usable, fallback = False, last is not None and last.shape == limit.shape
                instead = "the last good command" if fallback else "zero effort"
                self.error('effort_unusable', f'controller produced an unusable effort '
                           f'{tau!r}; publishing {instead} instead')
                tau = last if fallback else np.zeros(limit.shape)
            else:
                # The core clamps; this is the last line of defence, so shout if it fires.
                self.warn('effort_clamped',
                          f'effort {tau} beyond the URDF limits {limit}; clamped')
            tau = np.clip(tau, -limit, limit)
        self._last_good = tau
        self._msg.data = float_array(tau)
        self._publisher.publish(self._msg)
        return usable

    def _log_age_guard(self, guard, age, tracking):
        """One line per episode of late states, one more if it turns into an overload (a
        warning if that aborted a trajectory)."""
        late = (f'joint state {age * 1e3:.1f} ms old (max_state_age '
                f'{guard.max_state_age * 1e3:g} ms)')
        fresh = f'until states are fresh for {guard.recovery_time:g} s'
        if guard.overloads != self._guard_events[1]:
            overload = f'states late for {guard.overload_time:g} s'
            # two call sites: rclpy raises "Logger severity cannot be changed between calls"
            # when one line logs at two severities
            if tracking:
                self._logger.warning(f'{late}: {overload}, trajectory aborted, '
                                     f'holding with softened gains {fresh}')
            else:
                self._logger.info(f'{late}: {overload}, holding with softened gains {fresh}')
        else:
            self._logger.info(f'{late}: feedback softened {fresh}')
        self._guard_events = (guard.events, guard.overloads)

    def _loop_failed(self, error):
        self.error('state_loop', f'state loop: {type(error).__name__}: {error}')

    def warn(self, key, text):
        """A warning that may repeat every state: logged at once, then once per period with a
        count (ControllerContext.log_due); `key` names the kind."""
        self._context.warnings.warn(key, text)

    def error(self, key, text):
        """An error that may repeat every state, throttled like warn."""
        self._context.errors.warn(key, text)
