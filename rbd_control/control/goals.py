"""The Controller's goal inputs: trajectories (JTC's) and Cartesian targets (cartesian_impedance).

A part of the Controller class (controller.py), kept apart because it only admits goals: it
checks that the mode follows that kind of goal and that a fresh state exists to start from,
then hands the goal to the plan (trajectory/) or to the Cartesian law (laws/cartesian.py). It
reads the controller's fields (mode, _q, _plan, _map, _cartesian, _watchdog) and adds none.
"""
from __future__ import annotations

from rbd_control.control.config import CheckedGoal
from rbd_control.control.errors import TrajectoryError
from rbd_control.control.laws.cartesian_mode import checked_pose, checked_wrench
from rbd_control.control.trajectory.message import JointTrajectory
from rbd_control.control.trajectory.validation import check_goal
from rbd_control.dynamics import operational_space_inertia
from rbd_control.params.bounds import finite
from rbd_control.params.controller import TRACKING_MODES

__all__ = ["GoalInputs"]


class GoalInputs:
    # --- trajectories -----------------------------------------------------------------

    def set_trajectory(self, trajectory: JointTrajectory, now: float):
        """Start (or replace) a trajectory; raise TrajectoryError with the reason if rejected.
        Equivalent to install_trajectory(check_trajectory(trajectory, now), now)."""
        self._check_can_follow(now)  # the cheap refusals before the per-point work
        self.install_trajectory(self.check_trajectory(trajectory, now), now)

    def check_trajectory(self, trajectory: JointTrajectory, received: float) -> CheckedGoal:
        """The per-point work of set_trajectory: validation and the segments between points;
        `received` (the arrival time) is the "now" of start_time 0. Reads only the model and
        configuration, never the control state, so a node may run it on another thread while
        the control loop keeps answering states (and feeding the watchdog), then hand the
        result to install_trajectory on the control thread."""
        # the limits are the URDF's, payload or not
        return check_goal(trajectory, self._bare_model, self._map, self.config, received)

    def install_trajectory(self, goal: CheckedGoal, now: float):
        """Blend a checked trajectory in from the current desired state: O(joints)."""
        if goal.model is not self._bare_model or goal.joint_names != self._joint_names:
            raise TrajectoryError("the robot model changed while the trajectory was checked")
        self._check_can_follow(now)
        self.abort_reason = ""      # a new goal: nothing of it has been aborted yet
        if self._plan.empty:
            self._plan.hold(self._map.take(self._q), now)
        self._plan.blend_in(goal.checked, now, continuous=self._map.take(self._continuous))

    def _check_can_follow(self, now):
        self._check_no_collision()
        if self.mode not in TRACKING_MODES:
            raise TrajectoryError(
                f"mode {self.mode} does not follow trajectories; switch to one of {TRACKING_MODES}")
        self._check_fresh(now, self._q is not None, "")

    def _check_cartesian_goal(self, now):
        self._check_no_collision()
        if self.mode != "cartesian_impedance":
            raise TrajectoryError(f"mode {self.mode} does not take pose or wrench targets; "
                                  "switch to cartesian_impedance")
        self._check_fresh(now, self._q is not None and self._cartesian.active,
                          " in cartesian_impedance")

    def _check_fresh(self, now, have_state, where):
        """A goal needs a finite now and a fresh state to start from."""
        if not finite(now):
            raise TrajectoryError(f"now is not a finite time: {now!r}")
        if not have_state:
            raise TrajectoryError(f"no joint state received yet{where}")
        if self._watchdog.is_stale(now):
            raise TrajectoryError(
                f"joint states are stale (none for more than {self.config.state_timeout} s)")

    # --- Cartesian targets (cartesian_impedance) ---------------------------------------

    def set_pose_target(self, position, quaternion_xyzw, now: float):
        """Move the end effector to a pose (base frame) along a minimum-jerk path from the
        current target (pose.py); TrajectoryError with the reason if rejected."""
        self._check_cartesian_goal(now)
        self._cartesian.set_pose_target(*checked_pose(position, quaternion_xyzw), now)

    def set_wrench_target(self, wrench, now: float):
        """Feedforward wrench [fx, fy, fz, tx, ty, tz] (base axes, at the end-effector
        origin), ramped in; TrajectoryError with the reason if rejected."""
        self._check_cartesian_goal(now)
        self._cartesian.set_wrench_target(checked_wrench(wrench), now)

    def cartesian_stiffness(self, q):
        """The 6 x 6 task stiffness cartesian_impedance applies at q (model order; [omega; v]
        rows and columns, world axes): cartesian_stiffness with the task-space modes faster
        than the loop's design bandwidth softened to it (laws/cartesian.py)."""
        if self._cartesian is None:
            raise TrajectoryError("no cartesian_impedance law: ee_link is not set")
        Lambda = operational_space_inertia(self.model, q, self._cartesian.ee_link).Lambda
        return self._cartesian.task_gains(Lambda, self.feedback_scale)[0]

    @property
    def cartesian_state(self):
        """The last cartesian_impedance step (pose, target, error, wrench), or None."""
        return None if self._cartesian is None else self._cartesian.last
