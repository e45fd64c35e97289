"""Path and goal tolerances of a joint trajectory, with joint_trajectory_controller's rules.

As JTC's tolerances.hpp (jazzy) sits apart from its controller, this sits apart from ours:
no rclpy, no messages; the ROS action converts control_msgs/JointTolerance into JointTolerance.

    defaults = default_tolerances(joints, trajectory={'elbow': 0.1}, goal={'elbow': 0.01},
                                  stopped_velocity_tolerance=0.01, goal_time=0.5)
    active = tolerances_from_goal(defaults, joints, path_tolerance, goal_tolerance, 0.0)
    verdict = check(active, t, end_time, error_q, error_qd, first_sample=False)

Rules (JTC's):
- a tolerance of 0 is not checked; the defaults come from the parameters
  `constraints.<joint>.trajectory` (path position), `constraints.<joint>.goal` (goal
  position), `constraints.stopped_velocity_tolerance` (goal velocity of every joint) and
  `constraints.goal_time` (s after the last point to get within the goal tolerance; 0 = wait
  as long as it takes);
- in a goal's JointTolerance, 0 keeps the default, -1 erases it (no limit), a positive value
  replaces it; goal_time_tolerance the same way;
- the path tolerance is checked before the last point's time (and on the first sample); from
  the last point's time on, the goal tolerance: within it -> succeeded; still outside it
  more than goal_time after the last point (goal_time > 0) -> goal tolerance violated.
Deviation: JTC logs an unknown joint or an illegal value (< 0 other than -1) in a goal's
tolerances and silently falls back to its defaults; here it is an error (ToleranceError) with
the reason, so a client never runs under tolerances it did not ask for.
An acceleration tolerance is kept but never violated: the controller measures no
acceleration, and JTC checks acceleration only with acceleration state interfaces.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

__all__ = [
    "ERASE",
    "ToleranceError",
    "JointTolerance",
    "StateTolerances",
    "SegmentTolerances",
    "Verdict",
    "default_tolerances",
    "resolve_tolerance",
    "tolerances_from_goal",
    "check",
]

# control_msgs/JointTolerance: -1 = "erased" (no limit), 0 = unspecified (the default).
ERASE = -1.0
# JTC's stopped_velocity_tolerance default (rad/s or m/s).
DEFAULT_STOPPED_VELOCITY = 0.01

RUNNING, SUCCEEDED, PATH_VIOLATED, GOAL_VIOLATED = (
    "running", "succeeded", "path_tolerance_violated", "goal_tolerance_violated")


class ToleranceError(ValueError):
    """A tolerance is unusable; the message names the joint and field."""


@dataclass
class JointTolerance:
    """One joint's requested tolerance, shaped like control_msgs/JointTolerance."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass
class StateTolerances:
    """Per-joint bounds on |error| (command order); 0 = not checked."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def unchecked(cls, n: int) -> "StateTolerances":
        return cls(np.zeros(n), np.zeros(n), np.zeros(n))

    def copy(self) -> "StateTolerances":
        return StateTolerances(self.position.copy(), self.velocity.copy(),
                               self.acceleration.copy())

    def violations(self, error_q, error_qd):
        """(joints exceeding a bound, joints exceeding their position bound) as bool masks."""
        over_q = (self.position > 0.0) & (np.abs(error_q) > self.position)
        over_qd = (self.velocity > 0.0) & (np.abs(error_qd) > self.velocity)
        return over_q | over_qd, over_q


@dataclass
class SegmentTolerances:
    """JTC's SegmentTolerances: path (state_tolerance), goal (goal_state_tolerance), and the
    time allowed after the last point to get within the goal (0 = unlimited)."""

    path: StateTolerances
    goal: StateTolerances
    goal_time: float = 0.0

    def copy(self) -> "SegmentTolerances":
        return SegmentTolerances(self.path.copy(), self.goal.copy(), self.goal_time)


@dataclass
class Verdict:
    """The outcome of one check: status (RUNNING, SUCCEEDED, PATH_VIOLATED, GOAL_VIOLATED)
    and a sentence for the log / the action's error_string."""

    status: str
    message: str = ""

    @property
    def done(self) -> bool:
        return self.status != RUNNING


def _non_negative(value, what) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ToleranceError(f"{what} is not a number: {value!r}") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise ToleranceError(f"{what} must be a finite number >= 0, got {value}")
    return value


def default_tolerances(joints: Sequence[str], trajectory: Optional[Mapping[str, float]] = None,
                       goal: Optional[Mapping[str, float]] = None,
                       stopped_velocity_tolerance: float = DEFAULT_STOPPED_VELOCITY,
                       goal_time: float = 0.0) -> SegmentTolerances:
    """The tolerances from JTC's `constraints.*` parameters (JTC's get_segment_tolerances).

    trajectory / goal: {joint: position tolerance} (`constraints.<joint>.trajectory` /
    `.goal`); joints not named are not checked."""
    joints = list(joints)
    index = {name: i for i, name in enumerate(joints)}
    tolerances = SegmentTolerances(StateTolerances.unchecked(len(joints)),
                                   StateTolerances.unchecked(len(joints)),
                                   _non_negative(goal_time, "constraints.goal_time"))
    stopped = _non_negative(stopped_velocity_tolerance, "constraints.stopped_velocity_tolerance")
    tolerances.goal.velocity[:] = stopped
    for kind, values, target in (("trajectory", trajectory, tolerances.path),
                                 ("goal", goal, tolerances.goal)):
        for name, value in (values or {}).items():
            if name not in index:
                raise ToleranceError(
                    f"constraints.{name}.{kind}: {name!r} is not one of the controlled "
                    f"joints {joints}")
            target.position[index[name]] = _non_negative(value, f"constraints.{name}.{kind}")
    return tolerances


def resolve_tolerance(default: float, requested: float, what: str) -> float:
    """One requested value against its default: > 0 replaces it, 0 keeps it, -1 erases it
    (0 = no limit); anything else is an error (JTC's resolve_tolerance_source)."""
    try:
        requested = float(requested)
    except (TypeError, ValueError):
        raise ToleranceError(f"{what} is not a number: {requested!r}") from None
    if math.isnan(requested) or math.isinf(requested):
        raise ToleranceError(f"{what} is {requested}")
    if requested > 0.0:
        return requested
    if abs(requested - ERASE) < np.finfo(np.float32).eps:
        return 0.0
    if requested < 0.0:
        raise ToleranceError(
            f"{what} is {requested}: only > 0, 0 (default) or -1 (no limit) are allowed")
    return default


def tolerances_from_goal(defaults: SegmentTolerances, joints: Sequence[str],
                         path_tolerance: Sequence[JointTolerance] = (),
                         goal_tolerance: Sequence[JointTolerance] = (),
                         goal_time_tolerance: float = 0.0) -> SegmentTolerances:
    """The defaults overridden by a FollowJointTrajectory goal's tolerances."""
    index = {name: i for i, name in enumerate(joints)}
    active = defaults.copy()
    active.goal_time = resolve_tolerance(
        defaults.goal_time, goal_time_tolerance, "goal_time_tolerance")
    for field, requested, target, fallback in (
            ("path_tolerance", path_tolerance, active.path, defaults.path),
            ("goal_tolerance", goal_tolerance, active.goal, defaults.goal)):
        for tol in requested:
            if tol.name not in index:
                raise ToleranceError(
                    f"{field} names joint {tol.name!r}, which this controller does not command "
                    f"({list(joints)})")
            i = index[tol.name]
            for part in ("position", "velocity", "acceleration"):
                getattr(target, part)[i] = resolve_tolerance(
                    getattr(fallback, part)[i], getattr(tol, part), f"{field} {tol.name}.{part}")
    return active


def check(tolerances: SegmentTolerances, t: float, end_time: float, error_q, error_qd,
          joint_names: Sequence[str], first_sample: bool = False) -> Verdict:
    """JTC's per-update verdict for a trajectory that ends at `end_time`.

    error_q, error_qd: desired - measured (position error of continuous joints wrapped), in
    the tolerances' joint order."""
    before_last_point = t < end_time
    if before_last_point or first_sample:
        violated, by_position = tolerances.path.violations(error_q, error_qd)
        if np.any(violated):
            return Verdict(PATH_VIOLATED, "Aborted due to path tolerance violation: " + _describe(
                violated, by_position, tolerances.path, error_q, error_qd, joint_names))
    if before_last_point:
        return Verdict(RUNNING)
    violated, by_position = tolerances.goal.violations(error_q, error_qd)
    if not np.any(violated):
        return Verdict(SUCCEEDED, "Goal successfully reached!")
    late = t - end_time
    if tolerances.goal_time > 0.0 and late > tolerances.goal_time:
        return Verdict(GOAL_VIOLATED, f"Aborted due to goal_time_tolerance exceeding by "
                       f"{late - tolerances.goal_time:.6f} seconds: " + _describe(
                           violated, by_position, tolerances.goal, error_q, error_qd, joint_names))
    return Verdict(RUNNING)


def _describe(violated, by_position, bounds, error_q, error_qd, joint_names):
    j = int(np.argmax(violated))
    if by_position[j]:
        return (f"joint {joint_names[j]} position error {error_q[j]:.6g} "
                f"exceeds {bounds.position[j]:.6g}")
    return (f"joint {joint_names[j]} velocity error {error_qd[j]:.6g} "
            f"exceeds {bounds.velocity[j]:.6g}")
