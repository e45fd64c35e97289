"""Joint trajectories with joint_trajectory_controller (JTC) semantics, as piecewise polynomials.

A JointTrajectory (shaped like trajectory_msgs/JointTrajectory) is validated once, turned into
one polynomial of degree <= 5 per segment and joint, and then sampled at 1 kHz by Horner's rule.

Semantics (JTC's, plus one deliberate improvement):
- the fields given choose the interpolation between points: positions only -> linear,
  + velocities -> cubic, + accelerations -> quintic (every point must give the same fields);
- start_time 0 means "now"; a trajectory whose last point lies in the past is rejected;
  time_from_start must be >= 0 and strictly increasing;
- joints may come in any order; a subset of the controlled joints only when allowed;
- if the first point lies in the future (time_from_start > 0 or a future start stamp), the
  controller blends to it from the current *desired* state (position, velocity, acceleration)
  with a quintic, so replacing a running trajectory never makes the desired position or
  velocity jump (JTC restarts from the measured state and drops the velocity);
- continuous joints: the whole trajectory of such a joint is shifted by a multiple of 2*pi so
  its first point is within pi of the current desired position (shortest way round);
- a start stamp so far in the past that the first points are already over: sampling starts
  where the trajectory is now (JTC does the same; the desired state jumps there);
- a last point with a nonzero velocity is rejected unless allowed
  (`allow_nonzero_velocity_at_trajectory_end`, JTC's parameter; "nonzero" = above float32
  epsilon, as JTC);
- after the last point the desired state is the last point's position, velocity and
  acceleration (those not given are 0), as JTC's Trajectory::sample returns it.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from .angles import wrap_to_pi  # re-exported
from .bounds import (MAX_PLAUSIBLE_ACCELERATION, MAX_PLAUSIBLE_EFFORT, MAX_PLAUSIBLE_POSITION,
                     MAX_PLAUSIBLE_VELOCITY, MAX_START_AHEAD, MAX_TIME_FROM_START,
                     MIN_POINT_SPACING)
from .errors import TrajectoryError, brief, duplicates
from .path_limits import check_path_within_limits

__all__ = [
    "TrajectoryPoint",
    "JointTrajectory",
    "TrajectoryError",
    "InvalidJointsError",
    "OldTrajectoryError",
    "PiecewisePolynomial",
    "TrajectoryPlan",
    "plan_segments",
    "wrap_to_pi",
]

# Positions may sit on a limit; allow for float noise when checking waypoints against it.
_LIMIT_TOLERANCE = 1e-6
# JTC counts an end velocity as nonzero above std::numeric_limits<float>::epsilon().
_END_VELOCITY_EPS = float(np.finfo(np.float32).eps)

# the largest magnitude each point field may have
_FIELD_BOUND = {"positions": MAX_PLAUSIBLE_POSITION, "velocities": MAX_PLAUSIBLE_VELOCITY,
                "accelerations": MAX_PLAUSIBLE_ACCELERATION, "effort": MAX_PLAUSIBLE_EFFORT}


class InvalidJointsError(TrajectoryError):
    """The joint names are wrong: unknown, duplicated, missing (FollowJointTrajectory's
    INVALID_JOINTS)."""


class OldTrajectoryError(TrajectoryError):
    """The trajectory ends before now (FollowJointTrajectory's OLD_HEADER_TIMESTAMP)."""


@dataclass
class TrajectoryPoint:
    """One waypoint. Empty or None velocities/accelerations/effort mean "not given"."""

    positions: Sequence[float]
    velocities: Optional[Sequence[float]] = None
    accelerations: Optional[Sequence[float]] = None
    effort: Optional[Sequence[float]] = None
    time_from_start: float = 0.0


@dataclass
class JointTrajectory:
    """Joint names plus waypoints; start_time in seconds on the controller's clock (0 = now)."""

    joint_names: Sequence[str]
    points: Sequence[TrajectoryPoint] = field(default_factory=list)
    start_time: float = 0.0


# --- segment polynomials: coefficients c0..c5 of q(s) = sum c_k s^k, s in [0, T] -------------
# Arguments are (..., n) arrays (one row per segment) and durations broadcast against them,
# so a whole trajectory is built in one vectorised call; the result is (..., n, 6).


def _linear(q0, q1, duration):
    coef = np.zeros(np.shape(q0) + (6,))
    coef[..., 0] = q0
    coef[..., 1] = (q1 - q0) / duration
    return coef


def _cubic(q0, v0, q1, v1, duration):
    t = duration
    h = q1 - q0
    coef = np.zeros(np.shape(q0) + (6,))
    coef[..., 0] = q0
    coef[..., 1] = v0
    coef[..., 2] = (3.0 * h - (2.0 * v0 + v1) * t) / t**2
    coef[..., 3] = (-2.0 * h + (v0 + v1) * t) / t**3
    return coef


def _quintic(q0, v0, a0, q1, v1, a1, duration):
    t = duration
    h = q1 - q0
    coef = np.empty(np.shape(q0) + (6,))
    coef[..., 0] = q0
    coef[..., 1] = v0
    coef[..., 2] = 0.5 * a0
    coef[..., 3] = (20.0 * h - (8.0 * v1 + 12.0 * v0) * t - (3.0 * a0 - a1) * t**2) / (2.0 * t**3)
    coef[..., 4] = (-30.0 * h + (14.0 * v1 + 16.0 * v0) * t + (3.0 * a0 - 2.0 * a1) * t**2) / (2.0 * t**4)
    coef[..., 5] = (12.0 * h - 6.0 * (v1 + v0) * t + (a1 - a0) * t**2) / (2.0 * t**5)
    return coef


class PiecewisePolynomial:
    """Per-joint polynomials between absolute knot times, plus linearly interpolated effort.

    knots: (m+1,) absolute times; coef: (m, n, 6) with q(s) = sum_k coef[.., k] s^k on segment
    i, s = t - knots[i]; effort_coef: (m, n, 2) as [value, slope]. Before knots[0] the start of
    the first segment is returned; after knots[-1] the final point: positions, velocities,
    accelerations (zero when not given) and effort. With m = 0 it is a pure hold.
    """

    def __init__(self, knots, coef, effort_coef, final_positions, final_effort,
                 final_velocities=None, final_accelerations=None):
        self.knots = np.asarray(knots, dtype=float)
        self.coef = np.asarray(coef, dtype=float)
        self.effort_coef = np.asarray(effort_coef, dtype=float)
        self.final_positions = np.asarray(final_positions, dtype=float)
        self.final_effort = np.asarray(final_effort, dtype=float)
        zeros = np.zeros_like(self.final_positions)
        self.final_velocities = zeros if final_velocities is None else np.asarray(final_velocities, dtype=float)
        self.final_accelerations = (zeros.copy() if final_accelerations is None
                                    else np.asarray(final_accelerations, dtype=float))
        # (m, 6, n) copy so sampling is one small matrix product per call
        self._coef_by_power = np.ascontiguousarray(self.coef.transpose(0, 2, 1))
        self._basis = np.zeros((3, 6))

    @classmethod
    def hold(cls, positions, time=0.0, effort=None):
        positions = np.array(positions, dtype=float)
        n = positions.size
        effort = np.zeros(n) if effort is None else np.array(effort, dtype=float)
        return cls([time], np.zeros((0, n, 6)), np.zeros((0, n, 2)), positions, effort)

    @property
    def end_time(self) -> float:
        return float(self.knots[-1])

    @property
    def is_hold(self) -> bool:
        return self.coef.shape[0] == 0

    def sample(self, t, q_out, qd_out, qdd_out, effort_out):
        """Write position, velocity, acceleration and effort at time t into the *_out arrays."""
        segment = int(np.searchsorted(self.knots, t, side="right")) - 1
        if segment >= self.coef.shape[0] or self.is_hold:  # past the end, or a pure hold
            # (a hold is a hold at any time, also before its knot if the clock went back)
            q_out[:] = self.final_positions
            qd_out[:] = self.final_velocities
            qdd_out[:] = self.final_accelerations
            effort_out[:] = self.final_effort
            return
        segment = max(segment, 0)
        s = max(t - self.knots[segment], 0.0)
        s2, s3 = s * s, s * s * s
        basis = self._basis  # rows: d^0, d^1, d^2 of [1, s, s^2, s^3, s^4, s^5]
        basis[0] = (1.0, s, s2, s3, s3 * s, s3 * s2)
        basis[1] = (0.0, 1.0, 2.0 * s, 3.0 * s2, 4.0 * s3, 5.0 * s3 * s)
        basis[2] = (0.0, 0.0, 2.0, 6.0 * s, 12.0 * s2, 20.0 * s3)
        values = basis @ self._coef_by_power[segment]
        q_out[:] = values[0]
        qd_out[:] = values[1]
        qdd_out[:] = values[2]
        e = self.effort_coef[segment]
        effort_out[:] = e[:, 0] + e[:, 1] * s


# --- validation --------------------------------------------------------------------------


def _optional_field(point, name, index, n_joints):
    """Return the field as a float array, or None when absent/empty; check length and finiteness."""
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
        if stacked.shape == (len(points), n_joints) and np.all(np.abs(stacked) <= _FIELD_BOUND[name]):
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
            f"{name} are given for some points but not for point {missing}; give them for all or none")
    return np.stack(values)


def _order_joints(joint_names, controlled, allow_partial):
    """Map the trajectory's joint names onto controlled-joint indices."""
    names = list(joint_names)
    if not names:
        raise InvalidJointsError("trajectory has no joint names")
    given = set(names)
    if len(given) != len(names):
        raise InvalidJointsError(f"duplicate joint names in trajectory: {brief(duplicates(names))}")
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
            f"trajectory ends in the past: last point at t={start + times[-1]:.6f} s, now is {now:.6f} s")
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
    coef = _segments(positions, velocities, accelerations, durations)
    effort_coef = _effort_ramp(effort[:-1], effort[1:], durations)
    _check_plan(start + times, coef, effort_coef, limits, names)
    return ValidatedTrajectory(index, start + times, positions, velocities, accelerations, effort,
                               names, limits, coef, effort_coef)



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
                              f"({now:.6f} s), beyond the bound {MAX_START_AHEAD:g} s (another clock?)")
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


# --- planning ------------------------------------------------------------------------------


def plan_segments(checked: ValidatedTrajectory, now: float, current_q, current_qd, current_qdd,
                  current_effort, continuous=None) -> PiecewisePolynomial:
    """Add the blend from the current desired state to the segments `validate` planned.

    current_*: the desired state of the trajectory's joints (in its joint order) at `now`.
    Cost O(joints) apart from one copy of the segment arrays.
    """
    positions, coef, times = checked.positions, checked.coef, checked.times
    shift = np.zeros(positions.shape[1])
    if continuous is not None:
        shift = _unwrap_shift(positions[0], current_q, np.asarray(continuous)[checked.index])
    if np.any(shift):
        coef = coef.copy()
        coef[..., 0] += shift
    first = positions[0] + shift
    knots, coefs, effort_coefs = [times], [coef], [checked.effort_coef]
    # a first point less than MIN_POINT_SPACING ahead counts as reached: no blend that short
    if times[0] > now + MIN_POINT_SPACING:
        # The first point lies ahead: blend from the current desired state (quintic keeps
        # position, velocity and acceleration continuous at `now`).
        zeros = np.zeros_like(first)
        v1 = checked.velocities[0] if checked.velocities is not None else zeros
        a1 = checked.accelerations[0] if checked.accelerations is not None else zeros
        duration = times[0] - now
        blend = _quintic(current_q, current_qd, current_qdd, first, v1, a1, duration)[None]
        blend_effort = _effort_ramp(current_effort, checked.effort[0], duration)[None]
        _check_plan(np.array([now, times[0]]), blend, blend_effort, checked.limits, checked.names)
        knots, coefs, effort_coefs = [[now]] + knots, [blend] + coefs, [blend_effort] + effort_coefs
    return PiecewisePolynomial(np.concatenate(knots), np.concatenate(coefs),
                               np.concatenate(effort_coefs), positions[-1] + shift,
                               checked.effort[-1],
                               final_velocities=None if checked.velocities is None else checked.velocities[-1],
                               final_accelerations=(None if checked.accelerations is None
                                                    else checked.accelerations[-1]))


def _segments(positions, velocities, accelerations, durations):
    """(p - 1, n, 6) coefficients of the segments between consecutive points."""
    q0, q1 = positions[:-1], positions[1:]
    if velocities is None:
        return _linear(q0, q1, durations)
    v0, v1 = velocities[:-1], velocities[1:]
    if accelerations is None:
        return _cubic(q0, v0, q1, v1, durations)
    return _quintic(q0, v0, accelerations[:-1], q1, v1, accelerations[1:], durations)


def _effort_ramp(e0, e1, duration):
    return np.stack([e0, (e1 - e0) / duration], axis=-1)


def _check_plan(knots, coef, effort_coef, limits, names):
    """No NaN may reach the plan, and the path must stay inside the position limits."""
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(effort_coef))):
        raise TrajectoryError("planning produced non-finite coefficients (points too close or "
                              "values too large)")
    if limits is not None:
        check_path_within_limits(knots, coef, limits, names)


def _unwrap_shift(first_positions, current_q, continuous_mask):
    """The 2*pi*k per continuous joint that brings point 0 within pi of current_q."""
    turns = np.round((np.asarray(current_q) - first_positions) / (2.0 * math.pi))
    return np.where(continuous_mask, turns * 2.0 * math.pi, 0.0)


class TrajectoryPlan:
    """What every controlled joint should do: layers of polynomials over disjoint joint sets.

    A full trajectory replaces everything; a partial one (allow_partial_joints_goal) replaces
    only its joints, and the others keep following whatever they were following.
    """

    def __init__(self, n_joints: int):
        self.n = n_joints
        # (polynomial, joint indices, scratch rows for its samples) per layer
        self._layers: list[tuple[PiecewisePolynomial, np.ndarray, np.ndarray]] = []
        self.generation = next(_GENERATIONS)  # changes with every new motion (hold / replace)
        self._q = np.zeros(n_joints)
        self._qd = np.zeros(n_joints)
        self._qdd = np.zeros(n_joints)
        self._effort = np.zeros(n_joints)

    @property
    def empty(self) -> bool:
        return not self._layers

    @property
    def end_time(self) -> float:
        """When the last layer reaches its final point (-inf for a pure hold)."""
        ends = [p.end_time for p, _, _ in self._layers if not p.is_hold]
        return max(ends) if ends else -math.inf

    def hold(self, positions, time=0.0):
        """Hold all joints at `positions` (a new plan)."""
        self._layers = [_layer(PiecewisePolynomial.hold(positions, time), np.arange(self.n))]
        self.generation = next(_GENERATIONS)

    def shift_time(self, delta: float):
        """Move every layer by `delta` seconds: the clock restarted, the motion goes on."""
        for piece, _, _ in self._layers:
            piece.knots = piece.knots + delta

    def replace(self, piece: PiecewisePolynomial, index: np.ndarray):
        """Let `piece` drive the joints `index`; other joints keep their current layers."""
        taken = np.zeros(self.n, bool)
        taken[index] = True
        kept = []
        for old, old_index, scratch in self._layers:
            keep = ~taken[old_index]
            if np.all(keep):
                kept.append((old, old_index, scratch))
            elif np.any(keep):
                kept.append(_layer(_select_joints(old, keep), old_index[keep]))
        kept.append(_layer(piece, np.asarray(index, dtype=int)))
        self._layers = kept
        self.generation = next(_GENERATIONS)

    def sample(self, t):
        """Return (q, qd, qdd, effort) views valid until the next call."""
        for piece, index, (q, qd, qdd, eff) in self._layers:
            piece.sample(t, q, qd, qdd, eff)
            self._q[index] = q
            self._qd[index] = qd
            self._qdd[index] = qdd
            self._effort[index] = eff
        return self._q, self._qd, self._qdd, self._effort


# one sequence for all plans: a new plan never reuses a generation an old one had
_GENERATIONS = itertools.count()


def _layer(piece, index):
    return piece, index, np.zeros((4, index.size))


def _select_joints(piece: PiecewisePolynomial, mask) -> PiecewisePolynomial:
    return PiecewisePolynomial(piece.knots, piece.coef[:, mask], piece.effort_coef[:, mask],
                               piece.final_positions[mask], piece.final_effort[mask],
                               piece.final_velocities[mask], piece.final_accelerations[mask])
