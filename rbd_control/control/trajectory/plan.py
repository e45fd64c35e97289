"""Joint trajectories with joint_trajectory_controller (JTC) semantics, as piecewise polynomials.

A JointTrajectory (shaped like trajectory_msgs/JointTrajectory) is validated once
(validation.py: JTC's rules), turned into one polynomial of degree <= 5 per segment and joint
(polynomials.py), and then sampled at 1 kHz. This module holds the blend onto a new trajectory
and the plan of every controlled joint; the message-shaped input is message.py.

Semantics (JTC's, plus one deliberate improvement):
- if the first point lies in the future (time_from_start > 0 or a future start stamp), the
  controller blends to it from the current *desired* state (position, velocity, acceleration)
  with a quintic, so replacing a running trajectory never makes the desired position or
  velocity jump (JTC restarts from the measured state and drops the velocity);
- continuous joints: the whole trajectory of such a joint is shifted by a multiple of 2*pi so
  its first point is within pi of the current desired position (shortest way round);
- a start stamp so far in the past that the first points are already over: sampling starts
  where the trajectory is now (JTC does the same; the desired state jumps there);
- a partial trajectory (allow_partial_joints_goal) replaces only its joints' motion;
- after the last point the desired state is the last point's position, velocity and
  acceleration (those not given are 0), as JTC's Trajectory::sample returns it.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from rbd_control.control.trajectory.polynomials import PiecewisePolynomial, effort_ramp, quintic
from rbd_control.control.trajectory.validation import ValidatedTrajectory, check_plan
from rbd_control.params.bounds import MIN_POINT_SPACING

__all__ = ["TrajectoryPlan", "plan_segments"]


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
        blend = quintic(current_q, current_qd, current_qdd, first, v1, a1, duration)[None]
        blend_effort = effort_ramp(current_effort, checked.effort[0], duration)[None]
        check_plan(np.array([now, times[0]]), blend, blend_effort, checked.limits, checked.names)
        knots, coefs = [[now]] + knots, [blend] + coefs
        effort_coefs = [blend_effort] + effort_coefs
    return PiecewisePolynomial(np.concatenate(knots), np.concatenate(coefs),
                               np.concatenate(effort_coefs), positions[-1] + shift,
                               checked.effort[-1],
                               final_velocities=(None if checked.velocities is None
                                                 else checked.velocities[-1]),
                               final_accelerations=(None if checked.accelerations is None
                                                    else checked.accelerations[-1]))


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
        self._end_time = -math.inf
        self._whole = None   # the layer's polynomial when one layer drives every joint
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
        return self._end_time

    def finished(self, now: float) -> bool:
        """Every layer is at its final point (always, for a pure hold)."""
        return now >= self._end_time

    def hold(self, positions, time=0.0):
        """Hold all joints at `positions` (a new plan)."""
        self._set_layers([_layer(PiecewisePolynomial.hold(positions, time), np.arange(self.n))])

    def shift_time(self, delta: float):
        """Move every layer by `delta` seconds: the clock restarted, the motion goes on."""
        for piece, _, _ in self._layers:
            piece.knots = piece.knots + delta
        self._set_layers(self._layers, new_motion=False)

    def _set_layers(self, layers, new_motion=True):
        self._layers = layers
        ends = [p.end_time for p, _, _ in layers if not p.is_hold]
        self._end_time = max(ends) if ends else -math.inf
        # one layer over every joint in order samples straight into the plan's vectors
        whole = len(layers) == 1 and np.array_equal(layers[0][1], np.arange(self.n))
        self._whole = layers[0][0] if whole else None
        if new_motion:
            self.generation = next(_GENERATIONS)

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
        self._set_layers(kept)

    def blend_in(self, checked: ValidatedTrajectory, now: float, continuous=None):
        """Let a checked trajectory drive its joints from `now` on, blended in from this plan's
        desired state at `now` (plan_segments); continuous: mask over all plan joints."""
        q_d, qd_d, qdd_d, effort_d = (v[checked.index].copy() for v in self.sample(now))
        piece = plan_segments(checked, now, q_d, qd_d, qdd_d, effort_d, continuous=continuous)
        self.replace(piece, checked.index)

    def sample(self, t):
        """Return (q, qd, qdd, effort) views valid until the next call."""
        if self._whole is not None:
            self._whole.sample(t, self._q, self._qd, self._qdd, self._effort)
            return self._q, self._qd, self._qdd, self._effort
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
