"""~/follow_joint_trajectory and ~/controller_state, as joint_trajectory_controller offers them.

    action  ~/follow_joint_trajectory   control_msgs/action/FollowJointTrajectory
    out     ~/controller_state          control_msgs/msg/JointTrajectoryControllerState
                                        (reference, feedback, error, output) at state_publish_rate

control_msgs is optional: without it `attach` logs one line and returns None, and the node
runs without both (`~/joint_trajectory` still works).

Behaviour (JTC jazzy, see README for the deviations):
- a goal is validated by the core; a refused one ends ABORTED with INVALID_JOINTS (joint
  names), OLD_HEADER_TIMESTAMP (ends in the past) or INVALID_GOAL (anything else, tolerances
  included), and the error_string gives the reason. JTC rejects such goals outright; a
  ROS 2 rejection carries no result, so here the client learns the reason;
- tolerances from the goal, falling back to the parameters constraints.<joint>.trajectory /
  .goal, constraints.goal_time, constraints.stopped_velocity_tolerance
  (control/trajectory/tolerances.py),
  checked on every answered joint state; PATH_TOLERANCE_VIOLATED / GOAL_TOLERANCE_VIOLATED
  abort the goal and hold the measured position;
- feedback (desired, actual, error) at action_monitor_rate of control time;
- a cancel holds the measured position (the active law: gravity-compensated) and ends CANCELED;
- a new goal, or a trajectory on ~/joint_trajectory, ends the running goal ABORTED with
  INVALID_GOAL "Current goal preempted by new incoming action." (JTC's result since 4.41.0,
  ros2_controllers #2423; older releases canceled it);
- a goal's points are converted and validated on a worker thread (heavy_inputs.OffThread),
  as the topic's trajectories are, never under the lock the state thread needs; a goal
  still waiting for that check when a newer one arrives is refused (superseded), so a flood
  costs one check at a time; goals beyond GOAL_RATE per second are rejected, goals above
  MAX_GOAL_POINTS points refused; a finished
  goal's result is kept RESULT_TIMEOUT s (rclpy's default, 900 s, lets a flood fill the
  status array);
- repeated refusals and preemptions are logged once per period with a count;
- a trajectory dropped under the goal (stale joint states, a new robot model) aborts it with
  INVALID_GOAL and the reason.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.clock import Clock, ClockType
from rclpy.task import Future

from rbd_control.control.errors import InvalidJointsError, OldTrajectoryError, TrajectoryError
from rbd_control.control.trajectory import tolerances as tol
from rbd_control.params.controller import TRACKING_MODES
from rbd_control.ros.controller.heavy_inputs import OffThread
from rbd_control.ros.conversions import float_array, seconds, trajectory_from_msg

try:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
except ImportError as error:          # a ROS install without control_msgs, or a bare venv
    FollowJointTrajectory = JointTrajectoryControllerState = None
    MISSING = str(error)
else:
    MISSING = ''

PREEMPTED = 'Current goal preempted by new incoming action.'
PREEMPTED_BY_TOPIC = 'Current goal preempted by a new trajectory on ~/joint_trajectory.'
PATH_VIOLATED = 'Aborted due to path tolerance violation'   # JTC's error_string, verbatim
MAX_GOAL_POINTS = 100_000        # ~3x the topic's byte bound (heavy_inputs.MAX_TRAJECTORY_BYTES)
# a flood of goals is rejected beyond GOAL_BURST goals at once, GOAL_RATE per second on average
# (MoveIt sends one per motion): every accepted goal costs the executor a status array entry,
# republished with every change, for RESULT_TIMEOUT s after it ends
GOAL_RATE, GOAL_BURST = 10.0, 10
RESULT_TIMEOUT = 10               # s a finished goal's result is kept for its client (int: rcl)


def attach(node, context):
    """The action and state publisher on `node`, or None (one log line) without control_msgs.

    context: the node's ControllerContext (context.py): its controller (or None), control
    time, parameter values (action_monitor_rate, state_publish_rate, constraints.*: entries
    of the node's parameter table), the lock the state thread holds while it calls
    on_command, and the throttled log lines."""
    if FollowJointTrajectory is None:
        context.logger.info(
            f'~/follow_joint_trajectory and ~/controller_state are off: control_msgs is not '
            f'importable ({MISSING}); scripts/build_interfaces.sh builds it into a pip venv')
        return None
    return TrajectoryAction(node, context)


@dataclass
class _Goal:
    handle: object
    done: Future
    tolerances: tol.SegmentTolerances
    end_time: float
    joints: tuple
    generation: int                 # the controller's trajectory_generation it runs under
    first_sample: bool = True
    next_feedback: float = -np.inf


class TrajectoryAction:

    def __init__(self, node, context):
        self._context = context
        self._logger = context.logger
        # The goal callbacks run on the executor thread, on_command on the state thread: a
        # goal's trajectory and the preemption of the goal before it must change together,
        # or the state thread sees the old goal under a new trajectory and aborts it as
        # dropped instead of canceled
        self._lock = context.lock
        self._now = context.control_time
        self._feedback_period = 1.0 / context.value('action_monitor_rate')
        self._state_period = 1.0 / context.value('state_publish_rate')
        self._goal: Optional[_Goal] = None
        self._next_state = -np.inf
        self._state_msg = JointTrajectoryControllerState()
        self._state_pub = node.create_publisher(
            JointTrajectoryControllerState, '~/controller_state', 10)
        self._work = OffThread(node)      # each goal's per-point work, beside the loop
        self._admission = (float(GOAL_BURST), time.monotonic())   # (tokens, when counted)
        self._server = ActionServer(
            node, FollowJointTrajectory, '~/follow_joint_trajectory',
            execute_callback=self._execute, goal_callback=self._on_goal,
            cancel_callback=self._on_cancel, result_timeout=RESULT_TIMEOUT)
        # finishes cancels and notices a dropped trajectory also while no state arrives
        self._monitor = node.create_timer(
            self._feedback_period, self._on_monitor,
            clock=Clock(clock_type=ClockType.STEADY_TIME))

    # ---------------------------------------------------------------- goals

    def _on_goal(self, _request):
        """Accept while the goal rate is within GOAL_RATE (a token bucket of GOAL_BURST)."""
        tokens, then = self._admission
        now = time.monotonic()
        tokens = min(float(GOAL_BURST), tokens + (now - then) * GOAL_RATE)
        if tokens < 1.0:
            self._admission = (tokens, now)
            self._warn('goal_flood', f'action goal rejected: more than {GOAL_RATE:g} goals '
                       f'per second (a burst of {GOAL_BURST} at most)')
            return GoalResponse.REJECT
        self._admission = (tokens - 1.0, now)
        return GoalResponse.ACCEPT

    async def _execute(self, handle):
        checked = Future()
        try:
            controller, tolerances, work = self._prepare(handle)
        except Exception as error:
            return await self._refuse(handle, error)
        superseded = self._work.submit('goal', work, checked.set_result)
        if superseded:
            superseded(TrajectoryError('superseded by a newer goal before it was checked'))
        goal = await checked
        with self._lock:
            done = self._start(handle, controller, tolerances, goal)
        return await done

    def _prepare(self, handle):
        """The cheap checks of a goal, its tolerances, and its per-point work for the worker
        thread (converting and validating the points reads only the model and the config)."""
        request = handle.request
        controller = self._context.controller
        if controller is None:
            raise TrajectoryError('no robot model yet')
        if len(request.multi_dof_trajectory.joint_names):
            raise TrajectoryError('multi_dof_trajectory is not supported')
        if len(request.trajectory.points) > MAX_GOAL_POINTS:
            raise TrajectoryError(f'goal refused: {len(request.trajectory.points)} points exceed '
                                  f'the bound of {MAX_GOAL_POINTS} points')
        tolerances = self._tolerances(request, controller.joint_names)
        received = self._now()

        def work():
            trajectory = trajectory_from_msg(request.trajectory, received)
            # the message's points (5 objects each) would live as long as the goal handle,
            # RESULT_TIMEOUT after the goal ends, and lengthen every full garbage collection
            request.trajectory.points = []
            return controller.check_trajectory(trajectory, received)
        return controller, tolerances, work

    def _start(self, handle, controller, tolerances, checked):
        """Run a checked goal (or refuse it: `checked` is the exception its check raised),
        preempting the running one: a future of its result."""
        now = self._now()
        try:
            if isinstance(checked, Exception):
                raise checked
            if controller is not self._context.controller:
                raise TrajectoryError('the robot model changed while the goal was checked')
            controller.install_trajectory(checked, now)
        except Exception as error:
            return self._refuse(handle, error)
        self._context.notes.warn('goal_accepted', 'Accepted new action goal')
        self._preempt(PREEMPTED)
        done = Future()
        # a single point at time 0 is over at once: its goal check starts now
        end_time = controller.trajectory_end_time
        self._goal = _Goal(handle, done, tolerances, now if end_time is None else end_time,
                           tuple(controller.joint_names), controller.trajectory_generation)
        return done

    def _tolerances(self, request, joints):
        """The goal's tolerances over the constraints.* parameters' (read now, as JTC does)."""
        value = self._context.value
        defaults = tol.default_tolerances(
            joints,
            trajectory={j: value(f'constraints.{j}.trajectory') or 0.0 for j in joints},
            goal={j: value(f'constraints.{j}.goal') or 0.0 for j in joints},
            stopped_velocity_tolerance=value('constraints.stopped_velocity_tolerance'),
            goal_time=value('constraints.goal_time'))
        return tol.tolerances_from_goal(
            defaults, joints,
            [_joint_tolerance(t) for t in request.path_tolerance],
            [_joint_tolerance(t) for t in request.goal_tolerance],
            seconds(request.goal_time_tolerance))

    def _refuse(self, handle, error):
        Result = FollowJointTrajectory.Result
        if not isinstance(error, (TrajectoryError, tol.ToleranceError)):
            error = TrajectoryError(f'{type(error).__name__}: {error}')   # never without a reason
        code = (Result.INVALID_JOINTS if isinstance(error, InvalidJointsError) else
                Result.OLD_HEADER_TIMESTAMP if isinstance(error, OldTrajectoryError) else
                Result.INVALID_GOAL)
        self._warn('goal_refused', f'action goal refused: {error}')
        handle.abort()
        refused = Future()
        refused.set_result(Result(error_code=code, error_string=str(error)))
        return refused

    def _on_cancel(self, handle):
        self._logger.info('Got request to cancel goal')
        with self._lock:
            goal = self._goal
            if goal is not None and goal.handle == handle:
                self._hold()
        return CancelResponse.ACCEPT

    def on_topic_trajectory(self):
        """A trajectory arrived on ~/joint_trajectory and replaced the goal's."""
        self._preempt(PREEMPTED_BY_TOPIC)

    def _preempt(self, reason):
        goal, self._goal = self._goal, None
        if goal is None:
            return
        self._context.notes.warn('goal_preempted', reason)
        self._finish(goal, FollowJointTrajectory.Result.INVALID_GOAL, reason, status='abort')

    def _warn(self, key, text):
        """A warning that may repeat per goal: logged at once, then once per period with a
        count (the context's ThrottledWarnings, ControllerContext.log_due)."""
        self._context.warnings.warn(key, text)

    def close(self):
        self._work.stop()

    def _finish(self, goal, code, text, *, status=None):
        """Complete `goal` with a result; `status` ('succeed', 'abort', 'canceled': the goal
        handle's method) sets its state."""
        if status is not None and goal.handle.is_active:
            getattr(goal.handle, status)()
        if self._goal is goal:
            self._goal = None
        if not goal.done.done():
            goal.done.set_result(FollowJointTrajectory.Result(error_code=code, error_string=text))

    # ---------------------------------------------------------------- per state

    def on_command(self, now, command, stamp):
        """After each answered joint state: tolerances, feedback, controller state."""
        goal = self._goal
        if goal is not None and command.mode not in TRACKING_MODES:
            reason = command.reason or \
                f'mode switched to {command.mode}: the trajectory is not followed'
            self._logger.warning(reason)
            self._finish(goal, FollowJointTrajectory.Result.INVALID_GOAL, reason, status='abort')
        elif goal is not None and not self._ended_without_states(goal):
            self._monitor_goal(goal, now, command, stamp)
        if command.actual_q.size != len(command.joint_names):
            return      # a safe command for a state lacking commanded joints: no feedback to show
        if now >= self._next_state:
            self._next_state = now + self._state_period
            self._publish_state(command, stamp)

    def _monitor_goal(self, goal, now, command, stamp):
        error_qd = command.desired_qd - command.actual_qd
        verdict = tol.check(goal.tolerances, now, goal.end_time, command.error, error_qd,
                            goal.joints, first_sample=goal.first_sample)
        goal.first_sample = False
        if now >= goal.next_feedback or verdict.done:
            goal.next_feedback = now + self._feedback_period
            goal.handle.publish_feedback(self._feedback(command, stamp))
        Result = FollowJointTrajectory.Result
        if verdict.status == tol.SUCCEEDED:
            self._logger.info('Goal reached, success!')
            self._finish(goal, Result.SUCCESSFUL, verdict.message, status='succeed')
        elif verdict.done:
            self._logger.warning(verdict.message)
            self._hold()
            if verdict.status == tol.PATH_VIOLATED:   # the details are in the log line
                code, text = Result.PATH_TOLERANCE_VIOLATED, PATH_VIOLATED
            else:
                code, text = Result.GOAL_TOLERANCE_VIOLATED, verdict.message
            self._finish(goal, code, text, status='abort')

    def _on_monitor(self):
        with self._lock:
            if self._goal is not None:
                self._ended_without_states(self._goal)

    def _ended_without_states(self, goal):
        """Finish a goal that was canceled or whose trajectory the controller dropped; True
        if it is over. (A trajectory moved onto a restarted clock goes on.)"""
        if goal.handle.is_cancel_requested:
            self._logger.info('Canceling active action goal because cancel callback received.')
            self._finish(goal, FollowJointTrajectory.Result.SUCCESSFUL, '', status='canceled')
            return True
        controller = self._context.controller
        if controller is None or controller.trajectory_generation != goal.generation:
            reason = (controller is not None and controller.abort_reason) or \
                'trajectory dropped under the goal: joint states stale or a new robot model'
            self._logger.warning(reason)
            self._finish(goal, FollowJointTrajectory.Result.INVALID_GOAL, reason, status='abort')
            return True
        end_time = controller.trajectory_end_time
        if end_time is not None:
            goal.end_time = end_time    # moved if the clock restarted
        return False

    def _hold(self):
        controller = self._context.controller
        if controller is not None:
            controller.hold(self._now())

    # ---------------------------------------------------------------- messages

    def _feedback(self, command, stamp):
        feedback = FollowJointTrajectory.Feedback()
        feedback.header.stamp = stamp
        feedback.joint_names = list(command.joint_names)
        _point(feedback.desired, command.desired_q, command.desired_qd, command.desired_qdd)
        _point(feedback.actual, command.actual_q, command.actual_qd)
        _point(feedback.error, command.error, command.desired_qd - command.actual_qd)
        return feedback

    def _publish_state(self, command, stamp):
        msg = self._state_msg
        msg.header.stamp = stamp
        if tuple(msg.joint_names) != tuple(command.joint_names):
            msg.joint_names = list(command.joint_names)
        _point(msg.reference, command.desired_q, command.desired_qd, command.desired_qdd)
        _point(msg.feedback, command.actual_q, command.actual_qd)
        _point(msg.error, command.error, command.desired_qd - command.actual_qd)
        msg.output.effort = float_array(command.tau)
        msg.speed_scaling_factor = 1.0
        self._state_pub.publish(msg)


def _point(point, positions, velocities, accelerations=()):
    point.positions = float_array(positions)
    point.velocities = float_array(velocities)
    point.accelerations = float_array(accelerations)


def _joint_tolerance(msg):
    return tol.JointTolerance(msg.name, msg.position, msg.velocity, msg.acceleration)
