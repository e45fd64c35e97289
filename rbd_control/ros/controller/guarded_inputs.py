"""rbd_controller's large inputs, bounded and kept beside the control loop.

Registered from ControllerNode with one line, `GuardedInputs(node)`:

  ~/joint_trajectory  a raw subscription: refused above MAX_TRAJECTORY_BYTES before it is
                      deserialised; deserialised, converted and checked
                      (Controller.check_trajectory) on the worker thread, installed on the
                      executor thread (Controller.install_trajectory: O(joints)). Meanwhile the
                      executor keeps answering joint states, so a 10,000-point goal is not
                      "stale" because it took long to read.
  robot_description   a raw subscription: refused above MAX_DESCRIPTION_BYTES; deserialised and
                      parsed on the worker thread (ModelSource.parse; a description above 1 MB
                      is read in the description reader process), installed on the executor.
  keepalive           runs the node's watchdog from its own thread when the executor has not
                      for two watchdog periods (e.g. a parameter set of a 30 MB description).

Refusals are logged through one ThrottledWarnings (the first at once, repeats as one line per
period with a count), with the core's own repeated warnings (Controller.warnings); the state
path's repeated warnings and errors go through `warnings` and `errors` too (control/throttle.py
says why not rclpy's throttle_duration_sec).
"""
from __future__ import annotations

from rclpy.serialization import deserialize_message
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from rbd_control.control.model.source import ModelRefused
from rbd_control.control.throttle import LOG_PERIOD_S, ThrottledWarnings
from rbd_control.dynamics import RbdError
from rbd_control.ros.controller.heavy_inputs import (
    MAX_DESCRIPTION_BYTES,
    MAX_TRAJECTORY_BYTES,
    Keepalive,
    OffThread,
    string_from_cdr,
    too_big,
)
from rbd_control.ros.conversions import trajectory_from_msg
from rbd_control.ros.qos import ROBOT_DESCRIPTION_QOS

__all__ = ["GuardedInputs", "TOPIC_SOURCE"]

TOPIC_SOURCE = 'the robot_description topic'


class GuardedInputs:
    """Needs of the node: _controller, _source, _lock, _control_time(), _adopt(candidate,
    source), _run_watchdog(), _watchdog_beat, _watchdog_period()."""

    def __init__(self, node):
        self.node = node
        self.warnings = ThrottledWarnings(LOG_PERIOD_S)
        self.errors = ThrottledWarnings(LOG_PERIOD_S)
        self.notes = ThrottledWarnings(LOG_PERIOD_S)   # info: accepted goals, unchanged models
        self._work = OffThread(node)
        node.create_subscription(JointTrajectoryMsg, '~/joint_trajectory', self._on_trajectory,
                                 10, raw=True)
        node.create_subscription(String, 'robot_description', self._on_description,
                                 ROBOT_DESCRIPTION_QOS, raw=True)
        # started by start_keepalive, once the state path it publishes through exists
        self._keepalive = Keepalive(node._watchdog_period(), node._run_watchdog,
                                    lambda: node._watchdog_beat, self._keepalive_failed)

    def start_keepalive(self):
        self._keepalive.start()

    @property
    def keepalive_alive(self) -> bool:
        return self._keepalive.alive

    def _keepalive_failed(self, error):
        self.errors.warn('keepalive_failed',
                         f'keepalive watchdog failed: {type(error).__name__}: {error}')

    def log_due(self, now):
        """Log what is due (call every watchdog period, on the executor thread)."""
        logger = self.node.get_logger()
        controller = self.node._controller
        core = controller.warnings.due(now) if controller is not None else []
        for line in self.errors.due(now):
            logger.error(line)
        for line in self.warnings.due(now) + core:
            logger.warning(line)
        for line in self.notes.due(now):
            logger.info(line)

    def close(self):
        self._keepalive.stop()
        self._work.stop()

    # ------------------------------------------------------------------ trajectories

    def _on_trajectory(self, data: bytes):
        node = self.node
        reason = too_big('trajectory', len(data), MAX_TRAJECTORY_BYTES)
        if reason:
            return self._refuse('trajectory_size', reason)
        controller = node._controller
        if controller is None:
            return self._refuse('trajectory_no_model', 'trajectory ignored: no robot model yet')
        received = node._control_time()

        def check():
            msg = deserialize_message(data, JointTrajectoryMsg)
            trajectory = trajectory_from_msg(msg, received)
            return controller.check_trajectory(trajectory, received), len(msg.points)
        if self._work.submit('trajectory', check, self._install_trajectory):
            self._refuse('trajectory_superseded',
                         'trajectory superseded by a newer one before it was checked')

    def _install_trajectory(self, result):
        node = self.node
        if isinstance(result, Exception):
            return self._refuse('trajectory_rejected', f'trajectory rejected: {_reason(result)}')
        goal, points = result
        with node._lock:
            try:
                node._controller.install_trajectory(goal, node._control_time())
            except RbdError as error:
                return self._refuse('trajectory_rejected', f'trajectory rejected: {error}')
        self.notes.warn('trajectory_accepted', f'trajectory accepted: {points} points')
        if node._action is not None:    # a topic trajectory preempts a running goal (JTC)
            node._action.on_topic_trajectory()

    # ------------------------------------------------------------------ descriptions

    def _on_description(self, data: bytes):
        node = self.node
        reason = too_big('robot_description', len(data), MAX_DESCRIPTION_BYTES)
        if reason:
            return self._refuse('description_size', f'{reason} (keeping the previous model)')
        if node._source.topic_ignored():
            return self.notes.warn('description_ignored', 'robot_description topic ignored: '
                                   'the robot_description parameter is set')

        def parse():
            xml = string_from_cdr(data)
            return None if node._source.unchanged(xml) else node._source.parse(xml, TOPIC_SOURCE)
        self._work.submit('description', parse, self._install_description)

    def _install_description(self, result):
        node = self.node
        if result is None:   # e.g. robot_state_publisher restarted: keep the trajectory
            return self.notes.warn('description_unchanged',
                                   f'robot description from {TOPIC_SOURCE} unchanged')
        if isinstance(result, Exception):
            keeping = 'keeping the previous model' if node._controller else \
                'no model yet, publishing nothing'
            return self._refuse('description_rejected', f'rejected robot description from '
                                f'{TOPIC_SOURCE}: {_reason(result)} ({keeping})')
        if node._source.topic_ignored():   # a parameter was set while this one was read
            return
        with node._lock:
            node._adopt(result, TOPIC_SOURCE)

    def _refuse(self, key, reason):
        self.warnings.warn(key, reason)


def _reason(error):
    known = isinstance(error, (RbdError, ModelRefused))
    return str(error) if known else f'{type(error).__name__}: {error}'
