"""Mode joint_impedance: a streamed joint target (teleoperation, a learned policy) held by a
spring and a damper on the model's dynamics, every vector in command order. No rclpy.

    tau = g(q) + C(q, qd) qd + K (q_t - q) + D (qd_t - qd)  (+ friction at the measured qd)
    D_i = 2 zeta_i sqrt(K_i H_ii(q))

The feedforward is the bias of the measured state (RBDA 5.3: RNEA with qdd = 0), so the arm
is weightless and the spring alone moves it; D gives joint i the damping ratio zeta_i on its
own inertia at the pose, H_ii(q) (the other joints held by their springs). K is the
joint_impedance.stiffness parameter (default: the model's default kp, the designed loop), and
per target on the node's ~/target_joint_stiffness. A K above the wall loop's w^2 d_i (the
fastest loop the declared expected_state_period and expected_delay keep within the design's
margins, on the design inertia d_i: model/plan.py's limit_gains) is refused, naming the joint.

A streamed target arrives at 5-50 Hz while the loop runs at up to 1 kHz; it is shaped before
the spring sees it (as CRISP's target filter, error clip and max_delta_tau):
    filter   q_f <- q_f + (1 - exp(-dt / T)) (q_target - q_f)     T: filter_time_constant
             (qd_f likewise toward the target's velocity); T = 0: no filter
    clip     q_t = q + clip(q_f - q, -max_error, max_error)        per joint
    timeout  no target for target_timeout s: the last target is held with qd_t = 0 (`held`)
A target beyond a joint's soft limits (limits.soft_margin inside the hard ones, or the URDF's
<safety_controller>) is clipped into them, so a leader arm at its own stop keeps streaming
and the follower stays off its stop; a trajectory point beyond the hard limits is refused.
The torque rate (safety/command_limits.py) then bounds every step of the command.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from rbd_control.control.angles import wrap_to_pi
from rbd_control.control.errors import ConfigError, TrajectoryError, brief
from rbd_control.dynamics import bias, crba
from rbd_control.params.controller import CONTROLLER_PARAMETERS

__all__ = ["JointImpedanceConfig", "JointImpedance", "check_takes_joint_targets"]

_DEFAULT = CONTROLLER_PARAMETERS.core_default


@dataclass
class JointImpedanceConfig:
    """The joint_impedance.* parameters (params/controller.py)."""

    stiffness: Optional[Sequence[float]] = _DEFAULT("joint_impedance.stiffness")   # None: default
    damping_ratio: float = _DEFAULT("joint_impedance.damping_ratio")
    filter_time_constant: float = _DEFAULT("joint_impedance.filter_time_constant")   # s
    max_error: float = _DEFAULT("joint_impedance.max_error")             # rad (m) per joint
    target_timeout: float = _DEFAULT("joint_impedance.target_timeout")   # s

    def check(self):
        reason = CONTROLLER_PARAMETERS.refusal(self, "joint_impedance")
        if reason:
            raise ConfigError(reason)


def check_takes_joint_targets(mode: str):
    """Streamed joint targets are admitted in joint_impedance only (TrajectoryError)."""
    if mode != "joint_impedance":
        raise TrajectoryError(f"mode {mode} does not take joint targets; switch to "
                              "joint_impedance")


def _per_joint(values, n, what) -> np.ndarray:
    """One value for every joint, or one per joint, as n finite floats (TrajectoryError)."""
    try:
        array = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise TrajectoryError(f"{what} must be numbers, got {brief(values)}") from None
    if array.size == 1:
        array = np.full(n, array[0])
    if array.size != n or not np.all(np.isfinite(array)):
        raise TrajectoryError(f"{what} must be {n} finite numbers, got {brief(values)}")
    return array


class JointImpedance:
    """The shaped target, the stiffness and damping ratio per joint, and the law."""

    def __init__(self, joint_names: Sequence[str], config: JointImpedanceConfig,
                 default_stiffness, max_stiffness, continuous=None, warnings=None):
        """default_stiffness: the model's default kp (command order); max_stiffness: the wall
        loop's w^2 d_i (command order); continuous: which joints wrap (command order);
        warnings: a ThrottledWarnings, told when a target times out or is clipped."""
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        n = len(self.joint_names)
        self.max_stiffness = np.asarray(max_stiffness, dtype=float)
        self._lower, self._upper = np.full(n, -np.inf), np.full(n, np.inf)   # keep_within
        given = tuple(config.stiffness or ())
        self.K = np.zeros(n)
        self.zeta = np.full(n, float(config.damping_ratio))
        self._set(np.arange(n), (_per_joint(given, n, "joint_impedance.stiffness") if given
                                 else np.minimum(default_stiffness, self.max_stiffness)), None)
        self._T = float(config.filter_time_constant)
        self._max_error = float(config.max_error)
        self._timeout = float(config.target_timeout)
        self._wrap = None if continuous is None or not np.any(continuous) else \
            np.asarray(continuous, dtype=bool)
        self.target = np.zeros(n)            # the last target received (or the hold)
        self.target_velocity = np.zeros(n)
        self.filtered = np.zeros(n)          # q_f, qd_f
        self.filtered_velocity = np.zeros(n)
        self._received = -math.inf           # when the last target arrived
        self._last_step: Optional[float] = None
        self.active = False
        self.held = False                    # the target timed out: holding the last one
        self._warnings = warnings

    def keep_within(self, soft_range):
        """Targets are clipped into soft_range (n, 2) [lower, upper], command order, +-inf
        where none: the joints' soft limits (safety/command_limits.py), kept off the stops."""
        self._lower, self._upper = (np.array(side, dtype=float) for side in
                                    np.asarray(soft_range, dtype=float).T)

    def deactivate(self):
        self.active = False

    def activate(self, q_c, now):
        """Hold the measured pose q_c from now on (the mode's start, after a safe action)."""
        self.target[:] = self.filtered[:] = q_c
        self.target_velocity[:] = self.filtered_velocity[:] = 0.0
        self._received, self._last_step = now, now
        self.active, self.held = True, True

    def _indices(self, names, what) -> np.ndarray:
        unknown = [name for name in names if name not in self._index]
        if unknown or len(set(names)) != len(names):
            raise TrajectoryError(f"{what}: joints {brief(unknown or list(names))} are not the "
                                  f"commanded joints {list(self.joint_names)} (or repeat)")
        return np.array([self._index[name] for name in names], dtype=int)

    def set_target(self, names, positions, velocities, now):
        """A target by joint name (a subset keeps the others' targets); velocities: None or one
        per name. TrajectoryError naming what is wrong; nothing changes then."""
        index = self._indices(list(names), "joint target")
        velocities = () if velocities is None else velocities
        if len(positions) != len(index) or len(velocities) not in (0, len(index)):
            raise TrajectoryError(f"{len(index)} joint names but {len(positions)} target "
                                  f"positions and {len(velocities)} velocities")
        positions = _per_joint(positions, len(index), "target positions")
        velocities = (_per_joint(velocities, len(index), "target velocities")
                      if len(velocities) else 0.0)
        # a leader arm at its own stop streams targets beyond ours: followed to the soft
        # limit, never to the stop (a trajectory point beyond the hard ones is refused)
        lower, upper = self._lower[index], self._upper[index]
        if self._warnings is not None and np.any((positions < lower) | (positions > upper)):
            self._warnings.warn("joint_target_clipped", "joint target beyond the soft "
                                "limits: clipped into them")
        self.target[index] = np.clip(positions, lower, upper)
        self.target_velocity[index] = velocities
        self._received, self.held = now, False

    def set_stiffness(self, names, stiffness, damping_ratio=None):
        """K (N m/rad) and, optionally, the damping ratio of the named joints, from now on."""
        index = self._indices(list(names), "joint stiffness")
        K = _per_joint(stiffness, len(index), "stiffness")
        zeta = None if damping_ratio is None or len(damping_ratio) == 0 else \
            _per_joint(damping_ratio, len(index), "damping ratio")
        self._set(index, K, zeta)

    def _set(self, index, K, zeta):
        over = np.flatnonzero((K < 0.0) | (K > self.max_stiffness[index]))
        if over.size:
            j = index[over[0]]
            raise TrajectoryError(
                f"stiffness {K[over[0]]:g} N m/rad of joint {self.joint_names[j]!r} is outside "
                f"[0, {self.max_stiffness[j]:.4g}], the fastest loop expected_state_period and "
                f"expected_delay allow on its inertia")
        if zeta is not None and np.any((zeta <= 0.0) | (zeta > 10.0)):
            raise TrajectoryError(f"damping ratio must be in (0, 10], got {brief(zeta)}")
        self.K[index] = K
        if zeta is not None:
            self.zeta[index] = zeta

    def reference(self, now, q_c):
        """(q_t, qd_t, error) of this state: the target filtered, timed out, clipped about
        the measured q_c."""
        if now - self._received > self._timeout and not self.held:
            self.held = True
            if self._warnings is not None:
                self._warnings.warn("joint_target_timeout",
                                    f"no joint target for {self._timeout:g} s "
                                    f"(joint_impedance.target_timeout): holding the last one")
        if self.held:
            self.target_velocity[:] = 0.0
        dt = 0.0 if self._last_step is None else max(0.0, now - self._last_step)
        self._last_step = now
        # q_f <- q_f + (1 - exp(-dt / T)) (q_target - q_f)
        alpha = 1.0 if self._T <= 0.0 else -math.expm1(-dt / self._T)
        toward = self.target - self.filtered
        if self._wrap is not None:
            toward[self._wrap] = wrap_to_pi(toward[self._wrap])
        self.filtered += alpha * toward
        self.filtered_velocity += alpha * (self.target_velocity - self.filtered_velocity)
        error = self.filtered - q_c
        if self._wrap is not None:
            error[self._wrap] = wrap_to_pi(error[self._wrap])
        np.clip(error, -self._max_error, self._max_error, out=error)
        return q_c + error, self.filtered_velocity.copy(), error

    def torques(self, model, joint_map, q, qd, now, scale=1.0, friction=None):
        """(ff, fb, q_t, qd_t, error), command order: ff = g + C qd (+ friction at qd), fb the
        spring and damper at the shaped target. q, qd: model order. scale: the feedback's
        bandwidth scale (age guard, oscillation answer): K -> s^2 K, D -> s D."""
        take = joint_map.take
        q_c, qd_c = take(q), take(qd)
        q_t, qd_t, error = self.reference(now, q_c)
        ff = bias(model, q, qd)
        if friction is not None and friction.active:
            ff = ff + friction.torque(qd)
        # D_i = 2 zeta_i sqrt(K_i H_ii(q))
        inertia = take(np.diag(crba(model, q)))
        D = 2.0 * self.zeta * np.sqrt(self.K * inertia)
        fb = scale * scale * self.K * error + scale * D * (qd_t - qd_c)
        return take(ff), fb, q_t, qd_t, error
