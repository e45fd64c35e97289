"""Validation of a joint trajectory against joint_trajectory_controller's (JTC) rules, before
anything is planned: the counterpart of the checks in JTC's joint_trajectory_controller.cpp
(validate_trajectory_msg, validate_trajectory_point_field). No rclpy.

Rules (JTC's):
- the fields given choose the interpolation between points (polynomials.py), so every point
  must give the same fields; accelerations need velocities;
- start_time 0 means "now"; a trajectory whose last point lies in the past is rejected;
  time_from_start must be >= 0 and strictly increasing;
- joints may come in any order; a subset of the controlled joints only when allowed;
- a last point with a nonzero velocity is rejected unless allowed
  (`allow_nonzero_velocity_at_trajectory_end`, JTC's parameter; "nonzero" = above float32
  epsilon, as JTC);
- waypoints and the interpolated path between them stay within the position limits
  (path_limits.py); every number is finite and within the plausibility bounds of bounds.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from rbd_control.control.errors import (InvalidJointsError, OldTrajectoryError, TrajectoryError,
                                        brief, duplicates)
from rbd_control.control.trajectory.path_limits import check_path_within_limits
from rbd_control.control.trajectory.polynomials import effort_ramp, segment_coefficients
from rbd_control.params.bounds import (MAX_PLAUSIBLE_ACCELERATION, MAX_PLAUSIBLE_EFFORT,
                                       MAX_PLAUSIBLE_POSITION, MAX_PLAUSIBLE_VELOCITY,
                                       MAX_START_AHEAD, MAX_TIME_FROM_START, MIN_POINT_SPACING,
                                       finite)
from rbd_control.dynamics.model import Model
from rbd_control.params.controller import TRACKING_MODES

from rbd_control.control.trajectory.message import JointTrajectory

__all__ = ["ValidatedTrajectory", "CheckedGoal", "validate", "check_goal", "check_plan",
           "check_follows_trajectories"]

# Positions may sit on a limit; allow for float noise when checking waypoints against it.
_LIMIT_TOLERANCE = 1e-6
# JTC counts an end velocity as nonzero above std::numeric_limits<float>::epsilon().
_END_VELOCITY_EPS = float(np.finfo(np.float32).eps)

# the largest magnitude each point field may have
_FIELD_BOUND = {"positions": MAX_PLAUSIBLE_POSITION, "velocities": MAX_PLAUSIBLE_VELOCITY,
                "accelerations": MAX_PLAUSIBLE_ACCELERATION, "effort": MAX_PLAUSIBLE_EFFORT}


def _optional_field(point, name, index, n_joints):
    """Return the field as a float array, or None when absent/empty; check length and
    finiteness."""
    value = getattr(point, name)
    if value is None or len(value) == 0:
        return None
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TrajectoryError(f"point {index}: {name} are not numbers") from None
    if arr.shape != (n_joints,):
        raise TrajectoryError(
            f"point {index}: {name} has {arr.size} values for {n_joints} joints")
    if not np.all(np.isfinite(arr)):
        raise TrajectoryError(f"point {index}: {name} contains NaN or inf")
    bound = _FIELD_BOUND[name]
    if np.any(np.abs(arr) > bound):
        raise TrajectoryError(f"point {index}: {name} has {arr[np.argmax(np.abs(arr))]:g}, beyond "
                              f"the bound {bound:g} no real robot needs")
    return arr


def _stack_field(points, name, n_joints, required=False):
    """Stack one field over all points; it must be given by every point or by none.

    Fast path: one conversion and one bound check for the whole (points, joints) array; only
    when that fails are the points checked one by one, to name the first bad one."""
    raw = [getattr(p, name) for p in points]
    if not required and all(v is None or len(v) == 0 for v in raw):
        return None
    try:
        stacked = np.array(raw, dtype=float)
        if (stacked.shape == (len(points), n_joints)
                and np.all(np.abs(stacked) <= _FIELD_BOUND[name])):
            return stacked
    except (TypeError, ValueError):
        pass
    values = [_optional_field(p, name, i, n_joints) for i, p in enumerate(points)]
    given = [v is not None for v in values]
    if required and not all(given):
        raise TrajectoryError(f"point {given.index(False)} has no {name}")
    if not any(given):
        return None
    if not all(given):
        missing = given.index(False)
        raise TrajectoryError(
            f"{name} are given for some points but not for point {missing}; "
            "give them for all or none")
    return np.stack(values)


def _order_joints(joint_names, controlled, allow_partial):
    """Map the trajectory's joint names onto controlled-joint indices."""
    names = list(joint_names)
    if not names:
        raise InvalidJointsError("trajectory has no joint names")
    given = set(names)
    if len(given) != len(names):
        raise InvalidJointsError(
            f"duplicate joint names in trajectory: {brief(duplicates(names))}")
    position = {name: i for i, name in enumerate(controlled)}
    unknown = [n for n in names if n not in position]
    if unknown:
        raise InvalidJointsError(
            f"trajectory names joints this controller does not command: {brief(unknown)}")
    if len(names) < len(controlled) and not allow_partial:
        missing = [n for n in controlled if n not in given]
        raise InvalidJointsError(
            f"trajectory omits joints {brief(missing)} and allow_partial_joints_goal is false")
    return np.array([position[n] for n in names], dtype=int)


@dataclass
class ValidatedTrajectory:
    """A checked trajectory in the controlled-joint index space."""

    index: np.ndarray                 # (n,) indices into the controlled joints
    times: np.ndarray                 # (p,) absolute times of the points
    positions: np.ndarray             # (p, n)
    velocities: Optional[np.ndarray]  # (p, n) or None
    accelerations: Optional[np.ndarray]
    effort: Optional[np.ndarray]
    names: tuple = ()                 # (n,) the trajectory's joint names, for messages
    limits: Optional[np.ndarray] = None  # (n, 2) position limits the path must respect
    coef: Optional[np.ndarray] = None    # (p-1, n, 6) the segments between the points
    effort_coef: Optional[np.ndarray] = None  # (p-1, n, 2)


@dataclass(frozen=True)
class CheckedGoal:
    """A trajectory checked against one model (check_goal, Controller.check_trajectory), to
    install on that model."""

    checked: ValidatedTrajectory
    model: Model
    joint_names: tuple


def validate(traj: JointTrajectory, controlled: Sequence[str], now: float, *,
             allow_partial: bool = False, position_limits=None, continuous=None,
             allow_nonzero_end_velocity: bool = False) -> ValidatedTrajectory:
    """Check a trajectory against JTC's rules; raise TrajectoryError with the reason
    (InvalidJointsError for the joint names, OldTrajectoryError when it ends in the past).

    position_limits: (len(controlled), 2) or None; continuous: bool mask or None.
    """
    index = _order_joints(traj.joint_names, controlled, allow_partial)
    n = index.size
    points = list(traj.points)
    if not points:
        raise TrajectoryError("trajectory has no points")
    positions = _stack_field(points, "positions", n, required=True)
    velocities = _stack_field(points, "velocities", n)
    accelerations = _stack_field(points, "accelerations", n)
    effort = _stack_field(points, "effort", n)
    if accelerations is not None and velocities is None:
        raise TrajectoryError("accelerations are given without velocities")
    names = tuple(traj.joint_names)
    if velocities is not None and not allow_nonzero_end_velocity:
        _check_end_velocity(velocities[-1], names)
    times = _point_times(points)
    start = _start_time(traj.start_time, now)
    if start + times[-1] < now:
        raise OldTrajectoryError(
            f"trajectory ends in the past: last point at t={start + times[-1]:.6f} s, "
            f"now is {now:.6f} s")
    limits = None
    if position_limits is not None:
        limits = np.array(position_limits, dtype=float)[index]
        if continuous is not None:
            limits[np.asarray(continuous)[index]] = (-math.inf, math.inf)
        _check_limits(positions, limits, names)
    # the segments between points do not depend on the controller's state: planned here, so
    # that all the per-point work can run before (or beside) the control loop
    effort = effort if effort is not None else np.zeros_like(positions)
    durations = np.diff(times)[:, None]
    coef = segment_coefficients(positions, velocities, accelerations, durations)
    effort_coef = effort_ramp(effort[:-1], effort[1:], durations)
    check_plan(start + times, coef, effort_coef, limits, names)
    return ValidatedTrajectory(index, start + times, positions, velocities, accelerations, effort,
                               names, limits, coef, effort_coef)


def check_goal(trajectory: JointTrajectory, model, joint_map, config,
               received: float) -> CheckedGoal:
    """`validate` against a robot model's position limits and continuous joints and a
    ControllerConfig, for the commanded joints of joint_map; `received` (the arrival time) is
    the "now" of start_time 0. Reads only its arguments (Controller.check_trajectory)."""
    if not finite(received):
        raise TrajectoryError(f"receive time is not finite: {received!r}")
    try:
        checked = validate(
            trajectory, joint_map.names, received,
            allow_partial=config.allow_partial_joints_goal,
            position_limits=joint_map.take(np.asarray(model.position_limits)),
            continuous=joint_map.take(np.asarray(model.continuous, dtype=bool)),
            allow_nonzero_end_velocity=config.allow_nonzero_velocity_at_trajectory_end,
        )
    except (TypeError, AttributeError) as exc:  # not shaped like a JointTrajectory at all
        raise TrajectoryError(f"malformed trajectory: {exc}") from None
    return CheckedGoal(checked, model, joint_map.names)


def _check_end_velocity(velocity, names):
    moving = np.abs(velocity) > _END_VELOCITY_EPS
    if np.any(moving):
        j = int(np.argmax(moving))
        raise TrajectoryError(
            f"velocity of the last point is not zero for joint {names[j]}: {velocity[j]:.15g} "
            "(allow_nonzero_velocity_at_trajectory_end is false)")


def _point_times(points):
    try:
        times = np.array([float(p.time_from_start) for p in points])
    except (TypeError, ValueError):
        raise TrajectoryError("time_from_start is not a number") from None
    if not np.all(np.isfinite(times)):
        raise TrajectoryError("time_from_start contains NaN or inf")
    if times[0] < 0.0:
        raise TrajectoryError(f"point 0 has negative time_from_start {times[0]}")
    if times[-1] > MAX_TIME_FROM_START:
        raise TrajectoryError(f"time_from_start {times[-1]:g} s of the last point is beyond the "
                              f"bound {MAX_TIME_FROM_START:g} s")
    steps = np.diff(times)
    if np.any(steps <= 0.0):
        bad = int(np.argmax(steps <= 0.0)) + 1
        raise TrajectoryError(
            f"time_from_start must be strictly increasing: point {bad} ({times[bad]} s) "
            f"does not come after point {bad - 1} ({times[bad - 1]} s)")
    if np.any(steps < MIN_POINT_SPACING):
        bad = int(np.argmax(steps < MIN_POINT_SPACING)) + 1
        raise TrajectoryError(
            f"point {bad} is {steps[bad - 1]:.3g} s after point {bad - 1}; points must be at "
            f"least {MIN_POINT_SPACING:g} s apart")
    return times


def _start_time(stamp, now):
    try:
        stamp = float(stamp)
    except (TypeError, ValueError):
        raise TrajectoryError(f"start_time is not a number: {stamp!r}") from None
    if not math.isfinite(stamp):
        raise TrajectoryError("start_time is NaN or inf")
    if stamp - now > MAX_START_AHEAD:
        raise TrajectoryError(f"start_time {stamp:.6f} s is {stamp - now:.3g} s after now "
                              f"({now:.6f} s), beyond the bound {MAX_START_AHEAD:g} s "
                              "(another clock?)")
    return now if stamp == 0.0 else stamp


def _check_limits(positions, limits, names):
    lower = limits[:, 0] - _LIMIT_TOLERANCE
    upper = limits[:, 1] + _LIMIT_TOLERANCE
    outside = (positions < lower) | (positions > upper)
    if np.any(outside):
        p, j = np.argwhere(outside)[0]
        raise TrajectoryError(
            f"point {p}: {names[j]} position {positions[p, j]:.6g} is outside its limits "
            f"[{limits[j, 0]:.6g}, {limits[j, 1]:.6g}]")


def check_plan(knots, coef, effort_coef, limits, names):
    """No NaN may reach the plan, and the path must stay inside the position limits."""
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(effort_coef))):
        raise TrajectoryError("planning produced non-finite coefficients (points too close or "
                              "values too large)")
    if limits is not None:
        check_path_within_limits(knots, coef, limits, names)


def check_follows_trajectories(mode: str):
    """Trajectories are admitted in the tracking modes only (TrajectoryError)."""
    if mode not in TRACKING_MODES:
        raise TrajectoryError(
            f"mode {mode} does not follow trajectories; switch to one of {TRACKING_MODES}")
