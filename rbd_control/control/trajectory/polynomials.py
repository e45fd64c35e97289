"""Piecewise polynomials of a joint trajectory: one polynomial of degree <= 5 per segment and
joint, sampled by one small matrix product (the basis of s^k and its derivatives times the
coefficients). The counterpart of joint_trajectory_controller's trajectory.cpp
(interpolate_between_points); the rules for which points are accepted are in
trajectory/validation.py, the blend and the per-joint layers in trajectory/plan.py.

The interpolation between two points depends on the fields they give: positions only ->
linear, + velocities -> cubic (Hermite), + accelerations -> quintic; effort is interpolated
linearly. No rclpy.
"""
from __future__ import annotations

import numpy as np

__all__ = ["PiecewisePolynomial", "segment_coefficients", "quintic", "effort_ramp"]

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


def quintic(q0, v0, a0, q1, v1, a1, duration):
    t = duration
    h = q1 - q0
    coef = np.empty(np.shape(q0) + (6,))
    coef[..., 0] = q0
    coef[..., 1] = v0
    coef[..., 2] = 0.5 * a0
    coef[..., 3] = (20.0 * h - (8.0 * v1 + 12.0 * v0) * t - (3.0 * a0 - a1) * t**2) / (2.0 * t**3)
    coef[..., 4] = ((-30.0 * h + (14.0 * v1 + 16.0 * v0) * t + (3.0 * a0 - 2.0 * a1) * t**2)
                    / (2.0 * t**4))
    coef[..., 5] = (12.0 * h - 6.0 * (v1 + v0) * t + (a1 - a0) * t**2) / (2.0 * t**5)
    return coef


def segment_coefficients(positions, velocities, accelerations, durations):
    """(p - 1, n, 6) coefficients of the segments between consecutive points."""
    q0, q1 = positions[:-1], positions[1:]
    if velocities is None:
        return _linear(q0, q1, durations)
    v0, v1 = velocities[:-1], velocities[1:]
    if accelerations is None:
        return _cubic(q0, v0, q1, v1, durations)
    return quintic(q0, v0, accelerations[:-1], q1, v1, accelerations[1:], durations)


def effort_ramp(e0, e1, duration):
    return np.stack([e0, (e1 - e0) / duration], axis=-1)


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
        self.final_velocities = (zeros if final_velocities is None
                                 else np.asarray(final_velocities, dtype=float))
        self.final_accelerations = (zeros.copy() if final_accelerations is None
                                    else np.asarray(final_accelerations, dtype=float))
        # (m, 6, 2n): positions' coefficients by power, then effort's [value, slope, 0, ...],
        # so sampling is one small matrix product per call
        m, n = self.coef.shape[:2]
        self._coef_by_power = np.zeros((m, 6, 2 * n))
        self._coef_by_power[:, :, :n] = self.coef.transpose(0, 2, 1)
        self._coef_by_power[:, :2, n:] = self.effort_coef.transpose(0, 2, 1)
        self._basis = np.zeros((3, 6))
        self._basis_flat = self._basis.reshape(-1)   # a view: one assignment fills the basis

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
        segment = int(self.knots.searchsorted(t, side="right")) - 1
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
        # rows: d^0, d^1, d^2 of [1, s, s^2, s^3, s^4, s^5]
        self._basis_flat[:] = (1.0, s, s2, s3, s3 * s, s3 * s2,
                               0.0, 1.0, 2.0 * s, 3.0 * s2, 4.0 * s3, 5.0 * s3 * s,
                               0.0, 0.0, 2.0, 6.0 * s, 12.0 * s2, 20.0 * s3)
        values = self._basis @ self._coef_by_power[segment]
        n = q_out.shape[0]
        q_out[:] = values[0, :n]
        qd_out[:] = values[1, :n]
        qdd_out[:] = values[2, :n]
        effort_out[:] = values[0, n:]   # value + slope * s
