"""rbd_bringup --demo-trajectory: the demo trajectory as one FollowJointTrajectory goal, and what
became of it on rbd_bringup's console.

    goal = DemoGoal(node, joints, waypoints)
    goal.send()          # False while the action server is not there yet: call again
    goal.finished        # the result is in; goal.succeeded, goal.summary say what it was

The controller answers a goal it refuses with an ABORTED result whose error_string is the
reason (ros/controller/trajectory_action.py); a goal it runs sends feedback (desired, actual,
error) at action_monitor_rate. So: the first feedback means accepted; a result before any
feedback means refused, with its reason; the RMS tracking error is over the feedback's error
positions (rad, m for a prismatic joint), every joint and sample alike.

The goal asks to arrive: every joint within GOAL_TOLERANCE of its last point at most
GOAL_TIME_TOLERANCE s after the trajectory's end, else the controller aborts it with
GOAL_TOLERANCE_VIOLATED. Path tolerances are the controller's own (its constraints.*
parameters).

Without control_msgs (a venv where scripts/build_interfaces.sh did not run) there is no
action: `topic_fallback` publishes the trajectory on ~/joint_trajectory and no result comes.
"""
from __future__ import annotations

import math

from rbd_control.bringup.processes import CONTROLLER_NODE

GOAL_TOLERANCE = 0.05        # rad (m): where each joint must end up
GOAL_TIME_TOLERANCE = 1.0    # s after the end of the trajectory to get there


def action_available() -> bool:
    try:
        from control_msgs.action import FollowJointTrajectory  # noqa: F401
    except ImportError:
        return False
    return True


def topic_fallback(node, joints, waypoints) -> None:
    """The trajectory on the controller's ~/joint_trajectory (no result will come)."""
    from trajectory_msgs.msg import JointTrajectory

    from rbd_control.ros.conversions import joint_trajectory_msg
    publisher = node.create_publisher(JointTrajectory, f"{CONTROLLER_NODE}/joint_trajectory", 10)
    publisher.publish(joint_trajectory_msg(joints, waypoints))
    print("rbd_bringup: demo trajectory published on ~/joint_trajectory (control_msgs is not "
          "importable: no action, no result to report)", flush=True)


class DemoGoal:

    def __init__(self, node, joints, waypoints) -> None:
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
        self._action = FollowJointTrajectory
        self._client = ActionClient(node, FollowJointTrajectory,   # in `node`'s namespace
                                    f"{CONTROLLER_NODE}/follow_joint_trajectory")
        self.joints = list(joints)
        self.waypoints = waypoints
        self.sent = self.accepted = self.finished = False
        self.succeeded = False
        self.summary = "the demo trajectory was not sent"
        self._squares, self._samples = 0.0, 0
        self._largest = (0.0, "")

    def send(self) -> bool:
        if not self._client.server_is_ready():
            return False
        from builtin_interfaces.msg import Duration
        from control_msgs.msg import JointTolerance

        from rbd_control.ros.conversions import joint_trajectory_msg, time_msg
        goal = self._action.Goal()
        goal.trajectory = joint_trajectory_msg(self.joints, self.waypoints)
        goal.goal_tolerance = [JointTolerance(name=j, position=GOAL_TOLERANCE)
                               for j in self.joints]
        goal.goal_time_tolerance = time_msg(GOAL_TIME_TOLERANCE, Duration)
        self._client.send_goal_async(goal, feedback_callback=self._on_feedback) \
            .add_done_callback(self._on_response)
        self.sent = True
        self.summary = "the demo trajectory had not ended when the run stopped"
        print(f"rbd_bringup: demo trajectory sent: {len(self.waypoints)} points over "
              f"{self.waypoints[-1][0]:.1f} s, joints {', '.join(self.joints)}", flush=True)
        return True

    def rms(self) -> float:
        return math.sqrt(self._squares / self._samples) if self._samples else math.nan

    def _on_feedback(self, message) -> None:
        feedback = message.feedback
        if not self.accepted:
            self.accepted = True
            print("rbd_bringup: demo trajectory goal accepted", flush=True)
        for name, error in zip(feedback.joint_names, feedback.error.positions):
            self._squares += error * error
            self._samples += 1
            if abs(error) > self._largest[0]:
                self._largest = (abs(error), name)

    def _on_response(self, future) -> None:
        handle = future.result()
        if not handle.accepted:   # its goal rate limit: rejected without a reason
            self._end(False, "the demo trajectory goal was rejected by the action server")
            return
        handle.get_result_async().add_done_callback(self._on_result)

    def _on_result(self, future) -> None:
        answer = future.result()
        result = answer.result
        code = _code_name(self._action.Result, result.error_code)
        reason = f": {result.error_string}" if result.error_string else ""
        if not self.accepted and result.error_code != self._action.Result.SUCCESSFUL:
            self._end(False, f"the demo trajectory goal was refused ({code}){reason}")
            return
        error = (f"RMS tracking error {1e3 * self.rms():.2f} mrad over {self._samples} samples, "
                 f"largest {1e3 * self._largest[0]:.2f} mrad ({self._largest[1]})")
        succeeded = result.error_code == self._action.Result.SUCCESSFUL
        self._end(succeeded, f"the demo trajectory ended {code}{reason}; {error}")

    def _end(self, succeeded: bool, summary: str) -> None:
        self.finished, self.succeeded, self.summary = True, succeeded, summary
        print(f"rbd_bringup: {summary}", flush=True)


def _code_name(result_type, code: int) -> str:
    """FollowJointTrajectory.Result's constant named `code` (SUCCESSFUL, INVALID_GOAL, ...)."""
    for name in dir(result_type):
        if name.isupper() and getattr(result_type, name) == code:
            return name
    return f"error code {code}"
