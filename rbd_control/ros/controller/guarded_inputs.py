"""rbd_controller's large inputs, bounded and kept beside the control loop.

Registered from ControllerNode with one line, `GuardedInputs(node, context, action, adopt)`:

  ~/joint_trajectory  a raw subscription: refused above MAX_TRAJECTORY_BYTES before it is
                      deserialised; deserialised, converted and checked
                      (Controller.check_trajectory) on the worker thread, installed on the
                      executor thread (Controller.install_trajectory: O(joints)). Meanwhile the
                      executor keeps answering joint states, so a 10,000-point goal is not
                      "stale" because it took long to read.
  robot_description   a raw subscription: refused above MAX_DESCRIPTION_BYTES; deserialised and
                      parsed on the worker thread (ModelSource.parse; a description above 1 MB
                      is read in the description reader process), installed on the executor
                      by `adopt(candidate, source)` (the node's model install).

Refusals are logged through the context's ThrottledWarnings (the first at once, repeats as one
line per period with a count: ControllerContext.log_due; control/throttle.py says why not
rclpy's throttle_duration_sec).
"""
from __future__ import annotations

from rclpy.serialization import deserialize_message
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from rbd_control.control.model.source import ModelRefused
from rbd_control.dynamics import RbdError
from rbd_control.ros.controller.heavy_inputs import (
    MAX_DESCRIPTION_BYTES,
    MAX_TRAJECTORY_BYTES,
    OffThread,
    string_from_cdr,
    too_big,
)
from rbd_control.ros.conversions import trajectory_from_msg
from rbd_control.ros.qos import ROBOT_DESCRIPTION_QOS

__all__ = ["GuardedInputs", "TOPIC_SOURCE"]

TOPIC_SOURCE = 'the robot_description topic'


class GuardedInputs:
    """The trajectory and description topics of one ControllerNode: the ControllerContext
    (controller, source, lock, control_time, warnings and notes), the TrajectoryAction a
    topic trajectory preempts (None without one), and `adopt(candidate, source)`."""

    def __init__(self, node, context, action, adopt):
        self._context = context
        self._action = action
        self._adopt = adopt
        self._work = OffThread(node)
        node.create_subscription(JointTrajectoryMsg, '~/joint_trajectory', self._on_trajectory,
                                 10, raw=True)
        node.create_subscription(String, 'robot_description', self._on_description,
                                 ROBOT_DESCRIPTION_QOS, raw=True)

    def close(self):
        self._work.stop()

    # ------------------------------------------------------------------ trajectories

    def _on_trajectory(self, data: bytes):
        reason = too_big('trajectory', len(data), MAX_TRAJECTORY_BYTES)
        if reason:
            return self._refuse('trajectory_size', reason)
        controller = self._context.controller
        if controller is None:
            return self._refuse('trajectory_no_model', 'trajectory ignored: no robot model yet')
        received = self._context.control_time()

        def check():
            msg = deserialize_message(data, JointTrajectoryMsg)
            trajectory = trajectory_from_msg(msg, received)
            return controller.check_trajectory(trajectory, received), len(msg.points)
        if self._work.submit('trajectory', check, self._install_trajectory):
            self._refuse('trajectory_superseded',
                         'trajectory superseded by a newer one before it was checked')

    def _install_trajectory(self, result):
        context = self._context
        if isinstance(result, Exception):
            return self._refuse('trajectory_rejected', f'trajectory rejected: {_reason(result)}')
        goal, points = result
        with context.lock:
            try:
                context.controller.install_trajectory(goal, context.control_time())
            except RbdError as error:
                return self._refuse('trajectory_rejected', f'trajectory rejected: {error}')
        context.notes.warn('trajectory_accepted', f'trajectory accepted: {points} points')
        if self._action is not None:    # a topic trajectory preempts a running goal (JTC)
            self._action.on_topic_trajectory()

    # ------------------------------------------------------------------ descriptions

    def _on_description(self, data: bytes):
        source = self._context.source
        reason = too_big('robot_description', len(data), MAX_DESCRIPTION_BYTES)
        if reason:
            return self._refuse('description_size', f'{reason} (keeping the previous model)')
        if source.topic_ignored():
            return self._context.notes.warn('description_ignored', 'robot_description topic '
                                            'ignored: the robot_description parameter is set')

        def parse():
            xml = string_from_cdr(data)
            return None if source.unchanged(xml) else source.parse(xml, TOPIC_SOURCE)
        self._work.submit('description', parse, self._install_description)

    def _install_description(self, result):
        context = self._context
        if not isinstance(result, Exception) and result is not None \
                and context.source.unchanged(result.xml):
            result = None    # the same text twice in flight (a redelivered latched sample)
        if result is None:   # e.g. robot_state_publisher restarted: keep the trajectory
            return context.notes.warn('description_unchanged',
                                      f'robot description from {TOPIC_SOURCE} unchanged')
        if isinstance(result, Exception):
            keeping = 'keeping the previous model' if context.controller else \
                'no model yet, publishing nothing'
            if context.controller is None:   # /diagnostics says why nothing is commanded
                context.health.model_refused(f'description refused: {_reason(result)}')
            return self._refuse('description_rejected', f'rejected robot description from '
                                f'{TOPIC_SOURCE}: {_reason(result)} ({keeping})')
        if context.source.topic_ignored():   # a parameter was set while this one was read
            return
        with context.lock:
            self._adopt(result, TOPIC_SOURCE)

    def _refuse(self, key, reason):
        self._context.warnings.warn(key, reason)


def _reason(error):
    known = isinstance(error, (RbdError, ModelRefused))
    return str(error) if known else f'{type(error).__name__}: {error}'
