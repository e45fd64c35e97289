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
limit (`_stop_guard`).

`JointLimiter` is the per-state form: every joint's limits as arrays, the bounds computed into
preallocated arrays; `effort_bounds` is the same code on one joint. No rclpy.
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
        self._unlimited = ~self.has_effort if not self.has_effort.all() else None
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
        self._gain = np.empty(n)
        self._neg_effort, self._neg_velocity = -self.effort, -self.velocity
        self._neg_k_position = -self.k_position
        self._any_soft = bool(self.has_soft.any())
        # the stop guard's middle of each margin and half its width ([lower, upper] sides);
        # unguarded sides: middle 0 and half inf, so (q - 0) / inf = 0, no guard
        guarded = (self.has_soft & self.shapes_effort)[:, None] & np.ones((n, 2), bool)
        hard = np.where(guarded, np.column_stack([self.lower, self.upper]), 0.0)
        margin = np.column_stack([self.soft_lower, -self.soft_upper]) - hard * [1.0, -1.0]
        guarded &= margin > 0.0
        self._guard_half = np.where(guarded, 0.5 * margin, np.inf)
        self._neg_guard_effort = np.where(self.has_effort, -self.effort, 0.0)
        self._guard_middle = np.where(guarded, hard + np.array([0.5, -0.5]) * margin, 0.0)
        self._any_shaped = bool(self.shapes_effort.any())
        # preallocated per-state arrays
        self._lower_bound, self._upper_bound = np.empty(n), np.empty(n)
        self._v_min, self._v_max, self._scratch = np.empty(n), np.empty(n), np.empty(n)
        self._held = np.empty(n)
        self._mask, self._other = np.zeros(n, bool), np.zeros(n, bool)
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
        beyond an allowed one (where k_brake acts). bias: the torque that holds this state's
        velocity, g(q) + C(q, qd) qd (n,), about which the soft effort bounds are taken
        (module doc); None: zero, as ros2_control. In-place ufuncs on preallocated arrays
        (np.clip's wrapper and boolean indexing cost microseconds each)."""
        lower, upper = self._lower_bound, self._upper_bound
        self.position_bound.fill(False)
        self.braking.fill(False)
        np.copyto(lower, self._neg_effort)
        np.copyto(upper, self.effort)
        if qd is not None:
            self._hard_rules(q, qd, lower, upper)
            if self._any_shaped:
                self._soft_rules(q, qd, lower, upper,
                                 self.k_brake if k_brake is None else k_brake, bias)
        # no effort limit: no bound at all (the rules above only narrow finite ones)
        if self._unlimited is not None:
            np.copyto(lower, -np.inf, where=self._unlimited)
            np.copyto(upper, np.inf, where=self._unlimited)
        return lower, upper

    def _hard_rules(self, q, qd, lower, upper):
        """compute_effort_limits: no effort on toward a position limit reached, none that
        speeds up a joint beyond its velocity limit (absent limits are +-inf: never met)."""
        a, b = self._mask, self._other
        if q is not None:
            np.greater_equal(q, self.upper, out=a)
            a &= np.greater_equal(qd, 0.0, out=b)
            np.copyto(upper, 0.0, where=a)
            np.less_equal(q, self.lower, out=a)
            a &= np.less_equal(qd, 0.0, out=b)
            np.copyto(lower, 0.0, where=a)
        np.copyto(lower, 0.0, where=np.less(qd, self._neg_velocity, out=a))
        np.copyto(upper, 0.0, where=np.greater(qd, self.velocity, out=a))

    def _clipped(self, s, bound, negative_bound):
        np.maximum(s, negative_bound, out=s)
        return np.minimum(s, bound, out=s)

    def _soft_rules(self, q, qd, lower, upper, k_brake, bias):
        """The soft velocities v_min, v_max, then the effort that brakes a velocity above
        them with k_brake, below them k_velocity, about the bias (module doc)."""
        v_min, v_max, s, a = self._v_min, self._v_max, self._scratch, self._mask
        np.copyto(v_min, self._neg_velocity)
        np.copyto(v_max, self.velocity)
        if q is not None and self._any_soft:
            soft = self.has_soft
            # v = clip(-k_position (q - soft limit), -velocity, velocity)
            for v, limit in ((v_min, self.soft_lower), (v_max, self.soft_upper)):
                np.subtract(q, limit, out=s)
                s *= self._neg_k_position
                np.copyto(v, self._clipped(s, self.velocity, self._neg_velocity), where=soft)
            # beyond a soft limit: back toward it at least SOFT_LIMIT_REACH_VELOCITY
            np.greater(q, self.soft_upper, out=a)
            a &= soft
            np.copyto(v_max, np.minimum(v_max, -SOFT_LIMIT_REACH_VELOCITY, out=s), where=a)
            np.less(q, self.soft_lower, out=a)
            a &= soft
            np.copyto(v_min, np.maximum(v_min, SOFT_LIMIT_REACH_VELOCITY, out=s), where=a)
            np.minimum(v_min, v_max, out=v_min)
            bound = self.position_bound
            np.less(v_max, self.velocity, out=bound)
            bound |= np.greater(v_min, self._neg_velocity, out=a)
            bound &= soft
        gain = self._gain
        held = self._held
        for v, limit, pick, braking, widest in ((v_min, lower, np.maximum, np.less, np.minimum),
                                                (v_max, upper, np.minimum, np.greater,
                                                 np.maximum)):
            # effort = clip(bias + k (v - qd), -effort, effort), within the hard rules;
            # k = k_brake on a velocity beyond v (braking), k_velocity on the side that
            # accelerates
            np.copyto(gain, self.k_velocity)
            np.copyto(gain, k_brake, where=braking(qd, v, out=a))
            self.braking |= a
            np.subtract(v, qd, out=s)
            s *= gain
            if bias is not None:
                # braking: about the bias, so the wall holds whatever the model knows pulls
                # the joint; accelerating: the bias only where it widens the bound (a load to
                # hold), never narrower than ros2_control's (the whole effort at rest)
                widest(bias, 0.0, out=held)
                np.copyto(held, bias, where=a)
                s += held
            self._clipped(s, self.effort, self._neg_effort)
            np.copyto(limit, pick(s, limit, out=s), where=self.shapes_effort)
        if q is not None and self._any_soft:
            self._stop_guard(q, qd, lower, upper)
        np.minimum(lower, upper, out=lower)

    def _stop_guard(self, q, qd, lower, upper):
        """Past the middle of the margin and still moving on toward the hard limit, the bound
        falls linearly to the whole effort back at the hard limit: the last resort where the
        linear wall above cannot hold what pushes the joint (a stable brake on a light joint is
        weak). It acts only while the joint moves on, so it brakes and never throws the joint
        back (a one-sided spring: no energy returned). Unguarded sides have a half-width of
        inf: their fraction is 0, never > 0."""
        s, a, b = self._scratch, self._mask, self._other
        sides = ((1, upper, np.greater, np.minimum, 1.0), (0, lower, np.less, np.maximum, -1.0))
        for side, limit, onward, pick, sign in sides:
            # fraction of the way from the middle of the margin to the hard limit, at most 1
            np.subtract(q, self._guard_middle[:, side], out=s)
            s *= sign
            s /= self._guard_half[:, side]
            np.greater(s, 0.0, out=a)
            a &= onward(qd, 0.0, out=b)
            np.minimum(s, 1.0, out=s)
            s *= self._neg_guard_effort
            s *= sign                    # -effort x fraction above, +effort x fraction below
            np.copyto(limit, pick(limit, s, out=s), where=a)

    def clamp(self, tau, q, qd, out=None):
        """tau clamped into the bounds at (q, qd); out: where to write it (default: a new
        array). Returns (clamped, mask of the joints whose torque the bounds changed)."""
        lower, upper = self.bounds(q, qd)
        clamped = np.clip(tau, lower, upper, out=out)
        return clamped, (tau < lower) | (tau > upper)
