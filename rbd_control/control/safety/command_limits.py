"""The last terms of every command, in every mode, safe action and contact reaction:

    the law's torque, clamped to +-effort_limit * effort_scale (checks.EffortLimiter)
    -> joint-limit bounds (joint_limits.py) on the torque the joint feels, at the measured
       velocity and the position the joint will have when the command acts (q + qd
       (expected_delay + expected_state_period / 2)), about the torque g(q) + C(q, qd) qd that
       holds that velocity (a safe command has no fresh velocity: the effort limit only)
    -> robot_compensates_gravity: minus g(q) of the arm and its payload (the robot adds it),
       then clamped to +-effort_limit * effort_scale again (what the drive is sent)
    -> torque rate: |tau_k - tau_(k-1)| <= limits.torque_rate * dt per joint (franka::limitRate
       with kMaxTorqueRate, libfranka's rate_limiting.h), on what is published.

The bounds are on the torque the joint feels, so they see the gravity torque whether the
controller sends it or the robot adds it; gravity is taken out after them. The rate is on the
published command, the one a drive sees change (libfranka limits tau_d, which excludes
gravity). dt is the control time since the previous command, at most 2 expected_state_period:
after a gap (states missing, the watchdog's first safe command) the command moves on by no more
than two periods' worth; dt is one expected_state_period for the first command and after a clock
that went back. The previous command is zero at start, so the first commands ramp up from zero;
a mode switch, a safe action or a contact reaction ramps from the last command published.

Whichever limit acts is counted per joint and reported (`acting`, and the controller's
throttled warnings naming the joint and the limit). No rclpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from rbd_control.dynamics import bias, crba, gravity
from rbd_control.dynamics.free_inertia import (free_joint_inertia, max_inertia_ratio,
                                               regularised_inverse)

from rbd_control.control.errors import ConfigError
from rbd_control.control.safety.joint_limits import JointLimiter
from rbd_control.params.controller import CONTROLLER_PARAMETERS

__all__ = ["LimitsConfig", "CommandLimits", "LIMIT_KINDS", "soft_inset", "soft_limits"]

_DEFAULT = CONTROLLER_PARAMETERS.core_default
# what a count is kept of, per joint
LIMIT_KINDS = ("position", "velocity", "torque_rate")
POSITION, VELOCITY, TORQUE_RATE = range(3)


@dataclass
class LimitsConfig:
    """The limits.* parameters (params/controller.py)."""

    joint_limits: bool = _DEFAULT("limits.joint_limits")   # the bounds of joint_limits.py
    soft_margin: float = _DEFAULT("limits.soft_margin")    # rad (m) inside each hard limit
    torque_rate: float = _DEFAULT("limits.torque_rate")    # N m/s (N/s) per joint; 0: off

    def check(self):
        reason = CONTROLLER_PARAMETERS.refusal(self, "limits")
        if reason:
            raise ConfigError(reason)


def soft_inset(margin, hard):
    """How far inside its hard limits [lower, upper] (..., 2) a joint without a
    <safety_controller> gets its soft limits: `margin` (limits.soft_margin), at most a quarter
    of its range (a gripper's 4 cm keep half their travel)."""
    hard = np.asarray(hard, dtype=float)
    return np.minimum(float(margin), 0.25 * (hard[..., 1] - hard[..., 0]))


def soft_limits(model, joint_map, margin, k_position, k_velocity, k_brake, warnings=None):
    """JointLimiter arrays of the commanded joints (command order): the URDF's <limit> and
    <safety_controller>; a joint without one gets soft limits `margin` inside its hard limits
    (at most a quarter of its range) and the loop design's k_position, k_velocity, k_brake
    (command order, from the caller: model/plan.py's limit_gains); a joint with one brakes with
    the smaller of its k_velocity and the design's k_brake (stable however light the joint).
    Soft limits outside the hard ones are used as the hard ones, warned once naming the joint;
    a negative k refuses (ConfigError naming the joint)."""
    take = joint_map.take
    velocity = take(np.asarray(model.velocity_limit, dtype=float))
    hard = np.asarray(model.position_limits, dtype=float)[joint_map.index]
    safety = np.asarray(model.safety_controller, dtype=float)[joint_map.index]
    soft, kp, kv = safety[:, 0:2].copy(), safety[:, 2].copy(), safety[:, 3].copy()
    kb = np.minimum(kv, k_brake)
    for j, name in enumerate(joint_map.names):
        if np.any(safety[j, 2:] < 0.0):
            raise ConfigError(f"joint {name!r}: <safety_controller> k_position and k_velocity "
                              f"must be >= 0, got {safety[j, 2:].tolist()}")
        limited = np.all(np.isfinite(hard[j]))
        if not np.all(np.isfinite(safety[j])):
            inset = float(soft_inset(margin, hard[j])) if limited else 0.0
            soft[j] = hard[j] + [inset, -inset]
            kp[j], kv[j], kb[j] = k_position[j], k_velocity[j], k_brake[j]
            if inset > 0.0 and np.isfinite(velocity[j]):
                # the allowed velocity falls from the limit to zero over the whole margin at
                # most: braking from full speed starts a margin before the soft limit
                kp[j] = min(kp[j], velocity[j] / (2.0 * inset))
        elif limited and (soft[j, 0] < hard[j, 0] or soft[j, 1] > hard[j, 1]):
            if warnings is not None:
                warnings.once(f"soft_limits:{name}",
                              f"joint {name!r}: <safety_controller> soft limits "
                              f"{soft[j].tolist()} lie outside its hard limits "
                              f"{hard[j].tolist()}; the hard limits are used there")
            soft[j] = np.clip(soft[j], hard[j, 0], hard[j, 1])
    return hard, velocity, soft, kp, kv, kb


class CommandLimits:
    """One per model; `apply` on every command the controller returns."""

    def __init__(self, model, joint_map, effort_limit, config, k_position, k_velocity, k_brake,
                 inertia, warnings=None, previous: Optional["CommandLimits"] = None):
        """effort_limit: command order, with effort_scale; config: the ControllerConfig
        (limits, robot_compensates_gravity, expected_state_period); k_position, k_velocity,
        k_brake, inertia: the loop design's (command order, model/plan.py's limit_gains)."""
        limits = config.limits
        hard, velocity, soft, kp, kv, kb = soft_limits(model, joint_map, limits.soft_margin,
                                                       k_position, k_velocity, k_brake, warnings)
        self.joint_names = joint_map.names
        self._map = joint_map
        self.effort_limit = np.asarray(effort_limit, dtype=float)
        self.joints = JointLimiter(hard, velocity, self.effort_limit, soft, kp, kv, kb)
        self._design_inertia = np.asarray(inertia, dtype=float)
        # a <safety_controller>'s k_velocity stays the most a pose may raise k_brake to
        self._brake_cap = np.where(np.isfinite(model.safety_controller[joint_map.index, 3]),
                                   kv, np.inf)
        self.torque_rate = float(limits.torque_rate)
        self.bounded = bool(limits.joint_limits)
        self.compensates_gravity = bool(config.robot_compensates_gravity)
        self._period = float(config.expected_state_period)
        # how far ahead the bounds look: a command acts expected_delay after its state, and is
        # held for a period (half of it on average)
        self._lookahead = float(config.expected_delay) + 0.5 * self._period
        n = len(self.joint_names)
        self.counts = np.zeros((n, len(LIMIT_KINDS)), dtype=np.int64)
        self.felt = np.zeros(n)   # the torque the joints feel: published + the robot's g
        self._warnings = warnings
        same = previous is not None and previous.joint_names == self.joint_names
        self.last = previous.last.copy() if same else np.zeros(n)
        self._last_time = previous._last_time if same else None

    def apply(self, tau, now: float, q, qd, model, carries_gravity: bool = True):
        """tau (command order, the effort-clamped law) limited in place; returns the torque the
        joints feel (`felt`: tau, plus g(q) where the robot adds it). q, qd:
        the measured state, model order (qd None: not fresh). model: the one the law used
        (its payload). carries_gravity False: a command that holds nothing (safe 'zero'),
        which the robot's own gravity compensation then holds as it is."""
        take = self._map.take
        if self.bounded:
            lower, upper = self.bounds(model, q, qd)
            acted = (tau < lower) | (tau > upper)
            np.clip(tau, lower, upper, out=tau)
            if acted.any():
                self._count(acted, self.joints.position_bound)
        omitted = (take(gravity(model, q)) if self.compensates_gravity and carries_gravity
                   and q is not None else None)
        if omitted is not None:
            tau -= omitted
            np.clip(tau, -self.effort_limit, self.effort_limit, out=tau)
        if self.torque_rate > 0.0:
            self._limit_rate(tau, now)
        self.last[:] = tau
        self.felt[:] = tau
        if omitted is not None:
            self.felt += omitted
        return self.felt

    def bounds(self, model, q, qd):
        """The joint-limit bounds, about the bias; while a joint brakes, on this pose's
        inertia: k_brake scaled by m_i(q) / d_i, m_i(q) = 1 / (H(q)^-1)_ii the inertia the
        joint feels with every other joint free (d_i, the design's, is the least over poses
        and often several times lighter), and over several braking joints at once divided by
        lambda_max(M^1/2 (H^-1)_BB M^1/2) so no coupled mode is faster than the design
        (laws/loop_design.py step 1, at this pose)."""
        take = self._map.take
        q_c = None if q is None else take(q)
        qd_c = None if qd is None else take(qd)
        if q_c is not None and qd_c is not None:
            # where the joint will be when this command acts
            q_c += self._lookahead * qd_c
        # the bounds about the torque that holds this velocity (joint_limits.py's bias)
        held = None if q is None or qd is None else take(bias(model, q, qd))
        lower, upper = self.joints.bounds(q_c, qd_c, bias=held)
        braking = self.joints.braking
        if q is None or not braking.any():
            return lower, upper
        index = self._map.index[braking]
        inverse = regularised_inverse(crba(model, q))[np.ix_(index, index)]
        m = free_joint_inertia(inverse)
        if m.size > 1:
            m /= max(1.0, max_inertia_ratio(m, inverse))
        k_brake = self.joints.k_brake.copy()
        k_brake[braking] *= np.maximum(m / self._design_inertia[braking], 1.0)
        np.minimum(k_brake, self._brake_cap, out=k_brake)
        return self.joints.bounds(q_c, qd_c, k_brake, held)

    def _limit_rate(self, tau, now):
        dt = self._period if self._last_time is None else now - self._last_time
        if not dt > 0.0:
            dt = self._period
        step = self.torque_rate * min(dt, 2.0 * self._period)
        acted = np.abs(tau - self.last) > step
        np.clip(tau, self.last - step, self.last + step, out=tau)
        self._last_time = now
        if acted.any():
            self.counts[acted, TORQUE_RATE] += 1
            if self._warnings is not None:
                for j in np.flatnonzero(acted):
                    self._warnings.warn(f"limit:{self.joint_names[j]}:torque_rate",
                                        f"{self.joint_names[j]}: torque rate limited to "
                                        f"{self.torque_rate:g} N m/s (limits.torque_rate)")

    def _count(self, acted, position_bound):
        for j in np.flatnonzero(acted):
            kind = POSITION if position_bound[j] else VELOCITY
            self.counts[j, kind] += 1
            if self._warnings is not None:
                what = ("position (soft limit)" if kind == POSITION
                        else "velocity / hard limit")
                self._warnings.warn(f"limit:{self.joint_names[j]}:{LIMIT_KINDS[kind]}",
                                    f"{self.joint_names[j]}: effort bounded by its joint "
                                    f"limits, {what}")

    def acting(self) -> dict:
        """{(joint, kind): count} of every limit that has acted so far."""
        return {(self.joint_names[j], LIMIT_KINDS[k]): int(self.counts[j, k])
                for j, k in zip(*np.nonzero(self.counts))}
