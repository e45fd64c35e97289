"""Joint position and velocity limits on effort commands, as ros2_control's joint_limits
computes them (JointSoftLimiter::on_enforce with compute_effort_limits, joint_limits/src/
joint_soft_limiter.cpp and joint_limits_helpers.cpp, Jazzy and Rolling), per joint:

    hard rules      |tau| <= effort; at or beyond a position limit and moving on toward it
                    (or still): no effort toward it; beyond the velocity limit: no effort
                    that speeds the joint up further
    soft velocity   v_max = clip(-k_position (q - soft_upper), -velocity, velocity)
                    v_min = clip(-k_position (q - soft_lower), -velocity, velocity)
    soft effort     upper = clip(-k_velocity (qd - v_max), -effort, effort)
                    lower = clip(-k_velocity (qd - v_min), -effort, effort)
                    (intersected with the hard rules)

so a joint may approach its soft limit only as fast as k_position times the distance left,
and k_velocity brakes any velocity above that. A joint without an effort limit is not
limited at all (ros2_control: when_effort_limits_disabled_expect_no_effort_enforcement); an
unmeasured position (None) or velocity (None) skips the rules that need it.

Two differences from JointSoftLimiter, both beyond the soft limit only, where ros2_control
replaces the allowed velocities by +-1 deg/s (and by 0 beyond the hard limit + 2 mm): there the
bounds collapse to one value, -k_velocity (qd +- 1 deg/s), a pure damper that lets a sustained
push (a hand, a payload, gravity) carry the joint on into its hard stop at push / k_velocity.
Here the allowed velocity toward the limit keeps following -k_position (q - soft_limit) (at
least 1 deg/s away from it), a spring of stiffness k_position k_velocity back to the soft
limit, and the other side keeps its ordinary bound, so a tracking law may pull the joint back
at up to the velocity limit. Inside the soft limits, and the hard rules, are ros2_control's
(the ported cases in test/control/test_joint_limits.py).

Three additions, none in effort_bounds' ros2_control cases (which have no model): an optional
`bias`, the torque g(q) + C(q, qd) qd that holds the joint's velocity: braking, the bound is
bias + k_brake (v - qd), so the wall holds the velocity it allows whatever load the model knows
(ros2_control's bounds are on the net torque: a load pulling toward a soft limit carries the
joint past it by load / k_velocity) and only a push the model does not know deflects it;
accelerating, the bias is added only where it widens the bound (near its velocity limit a
joint lifting a load is otherwise granted less than the load and sags), never where it would
narrow it (the controller passes it: command_limits.py); an optional `k_brake`, the gain
on a velocity beyond the allowed one (braking), where k_velocity stays the gain below it (the
controller sizes it on its loop: a brake with k_velocity = effort / velocity on a light joint
is a velocity loop that diverges with a millisecond of delay; model/plan.py's limit_gains); and
the stop guard, past the middle of the margin while the joint still moves on toward the hard
limit (`_joint_bounds`).

`JointLimiter` is the per-state form: every joint's limits as arrays, the bounds computed joint
by joint (`_joint_bounds`, on Python floats) into preallocated arrays; `effort_bounds` is the
same code on one joint. No rclpy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["JointLimits", "effort_bounds", "JointLimiter", "SOFT_LIMIT_REACH_VELOCITY"]

# rad/s (m/s): the least velocity back from beyond a soft limit (ros2_control's 1 deg/s)
SOFT_LIMIT_REACH_VELOCITY = math.pi / 180.0
# a soft range or k_position below this is none (ros2_control's VALUE_CONSIDERED_ZERO)
VALUE_CONSIDERED_ZERO = 1e-10


@dataclass(frozen=True)
class JointLimits:
    """One joint's limits under the URDF's names: <limit lower upper velocity effort> and
    <safety_controller soft_lower_limit soft_upper_limit k_position k_velocity>; None where
    absent."""

    lower: Optional[float] = None
    upper: Optional[float] = None
    velocity: Optional[float] = None
    effort: Optional[float] = None
    soft_lower: Optional[float] = None
    soft_upper: Optional[float] = None
    k_position: Optional[float] = None
    k_velocity: Optional[float] = None


def effort_bounds(limits: JointLimits, position: Optional[float],
                  velocity: Optional[float]) -> tuple:
    """(lower, upper) effort bounds of one joint at the measured position and velocity (None:
    not measured); -inf / inf where nothing bounds it."""
    limiter = JointLimiter.of([limits])
    q = None if position is None else np.array([float(position)])
    qd = None if velocity is None else np.array([float(velocity)])
    lower, upper = limiter.bounds(q, qd)
    return float(lower[0]), float(upper[0])


def _value(value) -> float:
    return math.nan if value is None else float(value)


def _clip(x, bound):
    return -bound if x < -bound else (bound if x > bound else x)


def _joint_bounds(row, q, qd, k_brake, bias):
    """(lower, upper, soft position rule narrowed a bound, braking) of one joint (module doc):
    row holds its limits (JointLimiter._rows), q and qd its state (None: not measured)."""
    (lower, upper, velocity, effort, has_effort, shapes, soft, soft_lower, soft_upper,
     k_position, k_velocity, guard_low, guard_up, half_low, half_up) = row
    if not has_effort:      # no effort limit: no bound at all
        return -math.inf, math.inf, False, False
    low, up, narrowed, braking = -effort, effort, False, False
    if qd is None:
        return low, up, narrowed, braking
    # hard rules (compute_effort_limits): none on toward a position limit reached, none that
    # speeds the joint up beyond its velocity limit
    if q is not None:
        if q >= upper and qd >= 0.0:
            up = 0.0
        if q <= lower and qd <= 0.0:
            low = 0.0
    if qd < -velocity:
        low = 0.0
    if qd > velocity:
        up = 0.0
    v_min, v_max = -velocity, velocity
    if q is not None and soft:
        # v = clip(-k_position (q - soft limit), -velocity, velocity); beyond a soft limit
        # back toward it at least SOFT_LIMIT_REACH_VELOCITY
        v_min = _clip(-k_position * (q - soft_lower), velocity)
        v_max = _clip(-k_position * (q - soft_upper), velocity)
        if q > soft_upper:
            v_max = min(v_max, -SOFT_LIMIT_REACH_VELOCITY)
        if q < soft_lower:
            v_min = max(v_min, SOFT_LIMIT_REACH_VELOCITY)
        v_min = min(v_min, v_max)
        narrowed = v_max < velocity or v_min > -velocity
    if not shapes:
        return min(low, up), up, narrowed, False
    below, above = qd < v_min, qd > v_max
    braking = below or above
    # effort = clip(bias + k (v - qd), -effort, effort): k = k_brake on a velocity beyond v
    # (braking), k_velocity on the side that accelerates; there the bias only where it widens
    # the bound (a load to hold), never narrower than ros2_control's
    s_low = (k_brake if below else k_velocity) * (v_min - qd)
    s_up = (k_brake if above else k_velocity) * (v_max - qd)
    if bias is not None:
        s_low += bias if below else min(bias, 0.0)
        s_up += bias if above else max(bias, 0.0)
    low = max(_clip(s_low, effort), low)
    up = min(_clip(s_up, effort), up)
    if q is not None and soft:
        # the stop guard: past the middle of the margin and still moving on toward the hard
        # limit, the bound falls linearly to the whole effort back at the hard limit
        # (unguarded sides: half-width inf, fraction 0)
        fraction = (q - guard_up) / half_up
        if fraction > 0.0 and qd > 0.0:
            up = min(up, -effort * min(fraction, 1.0))
        fraction = (guard_low - q) / half_low
        if fraction > 0.0 and qd < 0.0:
            low = max(low, effort * min(fraction, 1.0))
    return min(low, up), up, narrowed, braking


class JointLimiter:
    """The bounds of n joints at once; arrays per joint, NaN (or inf) where a limit is absent:
    position (n, 2) hard [lower, upper], velocity and effort (n,), soft (n, 2) [soft_lower,
    soft_upper], k_position and k_velocity (n,). k_brake (n,), optional: the gain on a velocity
    beyond the allowed one (braking), where k_velocity stays the gain below it; None: k_velocity
    on both sides, as ros2_control."""

    def __init__(self, position, velocity, effort, soft, k_position, k_velocity, k_brake=None):
        position = np.asarray(position, dtype=float).reshape(-1, 2)
        soft = np.asarray(soft, dtype=float).reshape(-1, 2)
        self.n = n = position.shape[0]
        self.lower = np.where(np.isfinite(position[:, 0]), position[:, 0], -np.inf)
        self.upper = np.where(np.isfinite(position[:, 1]), position[:, 1], np.inf)
        self.has_position = np.isfinite(position).all(axis=1)
        velocity = np.asarray(velocity, dtype=float).reshape(n)
        self.has_velocity = np.isfinite(velocity) & (velocity > 0.0)
        self.velocity = np.where(self.has_velocity, velocity, np.inf)
        effort = np.asarray(effort, dtype=float).reshape(n)
        self.has_effort = np.isfinite(effort) & (effort >= 0.0)
        self.effort = np.where(self.has_effort, effort, np.inf)
        k_position = np.asarray(k_position, dtype=float).reshape(n)
        k_velocity = np.asarray(k_velocity, dtype=float).reshape(n)
        # JointSoftLimiter's has_soft_limits: both soft limits, a range and a k_position
        self.has_soft = (np.isfinite(soft).all(axis=1)
                         & (soft[:, 1] - soft[:, 0] > VALUE_CONSIDERED_ZERO)
                         & np.isfinite(k_position) & (np.abs(k_position) > VALUE_CONSIDERED_ZERO)
                         & self.has_position)
        # the joints without are masked out of the rules; finite stand-ins keep the
        # arithmetic free of inf * 0
        # [soft_lower, soft_upper] per joint, +-inf where none (what joint_impedance keeps to)
        self.soft_range = np.where(self.has_soft[:, None], soft, [-np.inf, np.inf])
        self.soft_lower = np.where(self.has_soft, soft[:, 0], 0.0)
        self.soft_upper = np.where(self.has_soft, soft[:, 1], 0.0)
        self.k_position = np.where(self.has_soft, k_position, 1.0)
        self.shapes_effort = self.has_effort & np.isfinite(k_velocity) & (k_velocity > 0.0)
        self.k_velocity = np.where(self.shapes_effort, k_velocity, 1.0)
        k_brake = k_velocity if k_brake is None else np.asarray(k_brake, dtype=float).reshape(n)
        self.k_brake = np.where(self.shapes_effort & np.isfinite(k_brake) & (k_brake > 0.0),
                                k_brake, self.k_velocity)
        # the stop guard's middle of each margin and half its width ([lower, upper] sides);
        # unguarded sides: middle 0 and half inf, so (q - 0) / inf = 0, no guard
        guarded = (self.has_soft & self.shapes_effort)[:, None] & np.ones((n, 2), bool)
        hard = np.where(guarded, np.column_stack([self.lower, self.upper]), 0.0)
        margin = np.column_stack([self.soft_lower, -self.soft_upper]) - hard * [1.0, -1.0]
        guarded &= margin > 0.0
        self._guard_half = np.where(guarded, 0.5 * margin, np.inf)
        self._guard_middle = np.where(guarded, hard + np.array([0.5, -0.5]) * margin, 0.0)
        # per joint, the constants of the per-state rules as Python floats and bools: six
        # joints' rules in a scalar loop cost a few microseconds, where ~40 numpy calls on
        # 6-element vectors cost ~40 (per-call overhead)
        self._rows = list(zip(
            self.lower.tolist(), self.upper.tolist(), self.velocity.tolist(),
            self.effort.tolist(), self.has_effort.tolist(), self.shapes_effort.tolist(),
            self.has_soft.tolist(), self.soft_lower.tolist(), self.soft_upper.tolist(),
            self.k_position.tolist(), self.k_velocity.tolist(),
            self._guard_middle[:, 0].tolist(), self._guard_middle[:, 1].tolist(),
            self._guard_half[:, 0].tolist(), self._guard_half[:, 1].tolist()))
        self._k_brake = self.k_brake.tolist()
        self._lower_bound, self._upper_bound = np.empty(n), np.empty(n)
        self.position_bound = np.zeros(n, bool)   # the soft position rule narrowed a bound
        self.braking = np.zeros(n, bool)          # a velocity beyond an allowed one

    @classmethod
    def of(cls, limits) -> "JointLimiter":
        """From a sequence of JointLimits."""
        rows = [[_value(getattr(lim, name)) for name in
                 ("lower", "upper", "velocity", "effort", "soft_lower", "soft_upper",
                  "k_position", "k_velocity")] for lim in limits]
        a = np.array(rows, dtype=float).reshape(-1, 8)
        return cls(a[:, 0:2], a[:, 2], a[:, 3], a[:, 4:6], a[:, 6], a[:, 7])

    def bounds(self, q, qd, k_brake=None, bias=None):
        """(lower, upper) arrays (owned by the limiter, overwritten by the next call) at the
        measured q and qd (arrays; None: not measured). k_brake: this state's braking gains
        in place of the constructor's (n,); `braking` marks the joints whose velocity is
        beyond an allowed one (where k_brake acts), `position_bound` those whose soft position
        rule narrowed a bound. bias: the torque that holds this state's velocity,
        g(q) + C(q, qd) qd (n,), about which the soft effort bounds are taken (module doc);
        None: zero, as ros2_control."""
        n = self.n
        qs = [None] * n if q is None else np.asarray(q, dtype=float).tolist()
        qds = [None] * n if qd is None else np.asarray(qd, dtype=float).tolist()
        kbs = self._k_brake if k_brake is None else np.asarray(k_brake, dtype=float).tolist()
        biases = [None] * n if bias is None else np.asarray(bias, dtype=float).tolist()
        lows, ups, bound, braking = [], [], [], []
        for row, q_j, qd_j, kb, b in zip(self._rows, qs, qds, kbs, biases):
            low, up, narrowed, brakes = _joint_bounds(row, q_j, qd_j, kb, b)
            lows.append(low)
            ups.append(up)
            bound.append(narrowed)
            braking.append(brakes)
        self._lower_bound[:], self._upper_bound[:] = lows, ups
        self.position_bound[:], self.braking[:] = bound, braking
        return self._lower_bound, self._upper_bound

    def clamp(self, tau, q, qd, out=None):
        """tau clamped into the bounds at (q, qd); out: where to write it (default: a new
        array). Returns (clamped, mask of the joints whose torque the bounds changed)."""
        lower, upper = self.bounds(q, qd)
        clamped = np.clip(tau, lower, upper, out=out)
        return clamped, (tau < lower) | (tau > upper)
