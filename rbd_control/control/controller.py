"""The controller: trajectory plan + control law + safety, behind one small API.

    controller = Controller(model, ControllerConfig(mode="computed_torque"))
    command = controller.update(now, names, q, qd)      # every control period
    controller.set_trajectory(trajectory, now)          # on a new goal
    safe = controller.check_watchdog(now)               # every period; a Command when stale

Times are seconds on one clock (the node's, sim time or wall time). Vectors in a Command are
in command order (`controller.joint_names`). No rclpy here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from rbd_control.dynamics import RbdError, gravity

from . import laws
from .gains import GainError, GainValue, Gains, default_gains, resolve_per_joint
from .safety import SAFE_ACTIONS, ConfigError, EffortLimiter, StateError, StateMapper, Watchdog
from .trajectory import JointTrajectory, TrajectoryError, TrajectoryPlan, plan_segments, validate

__all__ = ["MODES", "ControllerConfig", "Command", "Controller"]

MODES = ("gravity_compensation", "feedforward_pd", "computed_torque")
TRACKING_MODES = ("feedforward_pd", "computed_torque")


@dataclass
class ControllerConfig:
    """Everything a user can set. Gain-like fields take None (model default), one number for
    every joint, a list in `joints` order, or a dict {joint: value} (default for the rest)."""

    mode: str = "feedforward_pd"
    joints: Optional[Sequence[str]] = None        # command order; None = every model joint
    kp: GainValue = None                          # N m/rad
    kd: GainValue = None                          # N m s/rad
    ki: GainValue = None                          # N m/(rad s); 0 by default
    i_clamp: GainValue = None                     # N m bound on the integral term
    effort_scale: float = 1.0                     # (0, 1]: fraction of <limit effort> allowed
    state_timeout: float = 0.1                    # s without a valid state -> safe action
    safe_action: str = "hold"                     # 'hold' (gravity at last pose) or 'zero'
    damping: GainValue = None                     # N m s/rad, gravity_compensation only; 0
    allow_partial_joints_goal: bool = False
    ignore_unknown_joints: bool = True            # extra names in the state are skipped
    bandwidth_hz: float = 8.0                     # default-gain rule (see gains.py)
    damping_ratio: float = 1.0
    effort_limit: GainValue = None                # overrides <limit effort> per joint

    def check(self):
        """Raise ConfigError naming the first invalid field."""
        if self.mode not in MODES:
            raise ConfigError(f"mode {self.mode!r} is not one of {MODES}")
        if self.safe_action not in SAFE_ACTIONS:
            raise ConfigError(f"safe_action {self.safe_action!r} is not one of {SAFE_ACTIONS}")
        if not (_finite(self.effort_scale) and 0.0 < self.effort_scale <= 1.0):
            raise ConfigError(f"effort_scale must be in (0, 1], got {self.effort_scale!r}")
        if not (_finite(self.state_timeout) and self.state_timeout > 0.0):
            raise ConfigError(f"state_timeout must be a positive number of seconds, got {self.state_timeout!r}")
        if self.joints is not None:
            joints = list(self.joints)
            if not joints or len(set(joints)) != len(joints):
                raise ConfigError(f"joints must be a non-empty list without duplicates, got {joints}")


@dataclass
class Command:
    """One control output. Vectors are in command order; feedforward and feedback are the
    law's two parts before clamping, tau the clamped sum."""

    tau: np.ndarray
    desired_q: np.ndarray
    desired_qd: np.ndarray
    desired_qdd: np.ndarray
    error: np.ndarray
    feedforward: np.ndarray
    feedback: np.ndarray
    mode: str                                  # the law used, or 'safe_hold' / 'safe_zero'
    joint_names: tuple = ()
    saturated: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    holding: bool = False                      # no trajectory in progress


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


class Controller:
    """Model-based joint torque controller for one robot model. Not thread-safe."""

    def __init__(self, model, config: Optional[ControllerConfig] = None):
        self.config = config if config is not None else ControllerConfig()
        self.config.check()
        self.mode = self.config.mode
        self._watchdog = Watchdog(self.config.state_timeout)
        self._last_state = None          # (names, q, qd) as received, for set_model
        self._q = None                   # last valid state, model order
        self._qd = None
        self._last_update = None
        self._tripped = None             # safe action in force, or None
        self.set_model(model)

    # --- configuration ----------------------------------------------------------------

    @property
    def joint_names(self) -> tuple:
        return self._joint_names

    @property
    def trajectory_end_time(self) -> Optional[float]:
        """When the current trajectory reaches its last point; None when only holding."""
        end = self._plan.end_time
        return None if end == -math.inf else end

    def set_model(self, model):
        """Adopt a new robot model (a new robot_description). Drops any trajectory."""
        joints = tuple(self.config.joints) if self.config.joints is not None else tuple(model.joint_names)
        position = {name: i for i, name in enumerate(model.joint_names)}
        unknown = [j for j in joints if j not in position]
        if unknown:
            raise ConfigError(f"joints {unknown} are not in the robot model {list(model.joint_names)}")
        command_index = np.array([position[j] for j in joints], dtype=int)
        effort_limit = self._effort_limits(model, command_index, joints)
        base = default_gains(model, command_index, effort_limit,
                             bandwidth_hz=self.config.bandwidth_hz, damping_ratio=self.config.damping_ratio)
        gains = self._apply_overrides(base, joints, self.config)
        damping = self._resolve(self.config.damping, joints, np.zeros(len(joints)), "damping")

        self.model = model
        self._joint_names = joints
        self._cmd = command_index
        self._continuous = np.asarray(model.continuous, dtype=bool)
        self._limiter = EffortLimiter(effort_limit, self.config.effort_scale)
        self._mapper = StateMapper(model.joint_names, self.config.ignore_unknown_joints)
        self._set_gain_arrays(gains)
        self._damping_full = self._scatter(damping)
        self._plan = TrajectoryPlan(len(joints))
        self._remap_last_state()

    def set_gains(self, kp: GainValue = None, kd: GainValue = None, ki: GainValue = None,
                  i_clamp: GainValue = None):
        """Change some gains (same value forms as ControllerConfig); None leaves one as is.
        Resets the integral term."""
        g = self.gains
        n = self._joint_names
        new = Gains(
            kp=self._resolve(kp, n, g.kp, "kp"),
            kd=self._resolve(kd, n, g.kd, "kd"),
            ki=self._resolve(ki, n, g.ki, "ki"),
            i_clamp=self._resolve(i_clamp, n, g.i_clamp, "i_clamp"),
            reference_inertia=g.reference_inertia,
        )
        self._set_gain_arrays(new)

    def set_mode(self, mode: str, now: float):
        """Switch law. Resets the integral term; entering a tracking mode from
        gravity_compensation holds the measured pose, so the torque changes only by what the
        new law asks for at this state."""
        if mode not in MODES:
            raise ConfigError(f"mode {mode!r} is not one of {MODES}")
        if mode == self.mode:
            return
        previous, self.mode = self.mode, mode
        self._integral[:] = 0.0
        if mode in TRACKING_MODES and (previous not in TRACKING_MODES or self._plan.empty):
            self._hold_measured(now)

    def hold(self, now: float):
        """Stop following the trajectory and hold the measured pose (cancel / abort)."""
        self._hold_measured(now)

    # --- trajectories -----------------------------------------------------------------

    def set_trajectory(self, trajectory: JointTrajectory, now: float):
        """Start (or replace) a trajectory; raise TrajectoryError with the reason if rejected."""
        if self.mode not in TRACKING_MODES:
            raise TrajectoryError(
                f"mode {self.mode} does not follow trajectories; switch to one of {TRACKING_MODES}")
        if not _finite(now):
            raise TrajectoryError(f"now is not a finite time: {now!r}")
        if self._q is None:
            raise TrajectoryError("no joint state received yet")
        if self._watchdog.is_stale(now):
            raise TrajectoryError(
                f"joint states are stale (none for more than {self.config.state_timeout} s)")
        try:
            checked = validate(
                trajectory, self._joint_names, now,
                allow_partial=self.config.allow_partial_joints_goal,
                position_limits=np.asarray(self.model.position_limits)[self._cmd],
                continuous=self._continuous[self._cmd],
            )
        except (TypeError, AttributeError) as exc:  # not shaped like a JointTrajectory at all
            raise TrajectoryError(f"malformed trajectory: {exc}") from None
        if self._plan.empty:
            self._plan.hold(self._q[self._cmd], now)
        q_d, qd_d, qdd_d, effort_d = (v[checked.index].copy() for v in self._plan.sample(now))
        piece = plan_segments(checked, now, q_d, qd_d, qdd_d, effort_d,
                              continuous=self._continuous[self._cmd])
        self._plan.replace(piece, checked.index)

    # --- the control loop -------------------------------------------------------------

    def update(self, now: float, names: Sequence[str], q, qd) -> Command:
        """Compute the command for a measured state. Raises StateError for a bad state."""
        if not _finite(now):
            raise StateError(f"now is not a finite time: {now!r}")
        q_m, qd_m = self._mapper.map(names, q, qd)
        self._prepare_plan(now, q_m)
        try:
            if self.mode == "gravity_compensation":
                command = self._float(q_m, qd_m)
            else:
                command = self._track(now, q_m, qd_m)
        except RbdError as exc:  # the dynamics refused the state: report, never crash
            raise StateError(f"dynamics rejected the state: {exc}") from exc
        # only a state that produced a valid command counts as fresh for the watchdog
        self._accept_state(now, names, q, qd, q_m, qd_m)
        return command

    def check_watchdog(self, now: float) -> Optional[Command]:
        """None while states are fresh; otherwise the safe command (and the trajectory is
        aborted). 'hold' commands the gravity torque of the last measured pose (no feedback:
        there is no fresh state to feed back); 'zero' commands zero effort."""
        if not self._watchdog.is_stale(now):
            return None
        if self._tripped is None:
            self._trip()
        if self._tripped == "hold" and self._q is not None:
            return self._safe_hold_command()
        return self._zero_command()

    # --- internals --------------------------------------------------------------------

    def _prepare_plan(self, now, q):
        """Before a law runs on a new state: handle a stale gap and give the plan an anchor."""
        if self._q is not None and self._tripped is None and self._watchdog.is_stale(now):
            # a gap longer than state_timeout counts as stale even if nobody asked the
            # watchdog in between: the trajectory is aborted the same way
            self._trip()
        if self._tripped == "zero" or self._plan.empty:
            # first state, or after zero effort (the arm has moved): hold where it is now
            self._plan.hold(q[self._cmd], now)

    def _accept_state(self, now, names, q, qd, q_m, qd_m):
        self._last_state = (tuple(names), np.array(q, dtype=float), np.array(qd, dtype=float))
        self._q, self._qd = q_m, qd_m
        self._watchdog.feed(now)
        self._tripped = None
        self._last_update = now

    def _float(self, q, qd):
        ff, fb = laws.gravity_compensation(self.model, q, qd, self._damping_full)
        n = self._cmd.size
        return self._finish(ff, fb, q[self._cmd], qd[self._cmd], np.zeros(n), np.zeros(n),
                            integrate=False, holding=True)

    def _track(self, now, q, qd):
        q_d, qd_d, qdd_d, effort_d = self._plan.sample(now)
        q_full, qd_full, qdd_full = q.copy(), qd.copy(), np.zeros_like(q)
        q_full[self._cmd] = q_d
        qd_full[self._cmd] = qd_d
        qdd_full[self._cmd] = qdd_d
        integral = self._scatter(self._integral)
        if self.mode == "feedforward_pd":
            i_term = np.clip(self._ki_full * integral, -self._i_clamp_full, self._i_clamp_full)
            ff, fb = laws.feedforward_pd(self.model, q, qd, q_full, qd_full, qdd_full,
                                         self._kp_full, self._kd_full,
                                         continuous=self._continuous, i_term=i_term)
        else:
            acc_i = np.clip(self._ki_full * integral, -self._i_clamp_full, self._i_clamp_full) / self._h_full
            ff, fb = laws.computed_torque(self.model, q, qd, q_full, qd_full, qdd_full,
                                          self._kp_acc_full, self._kd_acc_full,
                                          continuous=self._continuous, acc_i=acc_i)
        ff[self._cmd] += effort_d  # JTC semantics: a point's effort is a feedforward torque
        error = laws.position_error(q_d, q[self._cmd], self._continuous[self._cmd])
        return self._finish(ff, fb, q_d, qd_d, qdd_d, error, integrate=True, now=now,
                            holding=self._plan_holding(now))

    def _finish(self, ff, fb, q_d, qd_d, qdd_d, error, *, integrate, holding, now=None):
        ff_c, fb_c = ff[self._cmd], fb[self._cmd]
        tau, saturated = self._limiter.clamp(ff_c + fb_c)
        if integrate:
            self._integrate(now, error, tau, saturated)
        return Command(tau=tau, desired_q=np.array(q_d), desired_qd=np.array(qd_d),
                       desired_qdd=np.array(qdd_d), error=error, feedforward=ff_c, feedback=fb_c,
                       mode=self.mode, joint_names=self._joint_names, saturated=saturated,
                       holding=holding)

    def _integrate(self, now, error, tau, saturated):
        """Integral of the position error with two anti-windup rules: no integration while
        saturated in the direction the error pushes, and |ki * integral| <= i_clamp."""
        if not np.any(self._ki > 0.0) or self._last_update is None:
            return
        dt = now - self._last_update
        if not (0.0 < dt <= self.config.state_timeout):
            return  # first step, clock jump or a gap: do not integrate over it
        pushing_into_limit = saturated & (np.sign(error) == np.sign(tau))
        self._integral += np.where(pushing_into_limit, 0.0, error * dt)
        bound = np.where(self._ki > 0.0, self._i_clamp / np.maximum(self._ki, 1e-300), 0.0)
        np.clip(self._integral, -bound, bound, out=self._integral)

    def _plan_holding(self, now):
        end = self._plan.end_time
        return end == -math.inf or now >= end

    def _trip(self):
        """States went stale: abort the trajectory and reset the integral."""
        self._tripped = self.config.safe_action
        self._integral[:] = 0.0
        if self._q is not None and self._tripped == "hold":
            self._plan.hold(self._q[self._cmd])
        else:
            self._plan = TrajectoryPlan(len(self._joint_names))

    def _safe_hold_command(self):
        ff = gravity(self.model, self._q)[self._cmd]
        tau, saturated = self._limiter.clamp(ff)
        q_hold = self._q[self._cmd].copy()
        n = q_hold.size
        return Command(tau=tau, desired_q=q_hold, desired_qd=np.zeros(n), desired_qdd=np.zeros(n),
                       error=np.zeros(n), feedforward=ff, feedback=np.zeros(n), mode="safe_hold",
                       joint_names=self._joint_names, saturated=saturated, holding=True)

    def _zero_command(self):
        n = len(self._joint_names)
        q_hold = self._q[self._cmd].copy() if self._q is not None else np.zeros(n)
        z = np.zeros(n)
        return Command(tau=z.copy(), desired_q=q_hold, desired_qd=z.copy(), desired_qdd=z.copy(),
                       error=z.copy(), feedforward=z.copy(), feedback=z.copy(), mode="safe_zero",
                       joint_names=self._joint_names, saturated=np.zeros(n, bool), holding=True)

    def _hold_measured(self, now):
        self._integral[:] = 0.0
        if self._q is None:
            self._plan = TrajectoryPlan(len(self._joint_names))  # re-anchored by the first state
        else:
            self._plan.hold(self._q[self._cmd], now)

    def _remap_last_state(self):
        """After a model change, keep the last state if it covers the new model's joints."""
        self._q = self._qd = None
        self._integral = np.zeros(len(self._joint_names))
        if self._last_state is None:
            return
        try:
            self._q, self._qd = self._mapper.map(*self._last_state)
        except StateError:
            self._last_state = None

    def _set_gain_arrays(self, gains: Gains):
        self.gains = gains
        self._ki = gains.ki
        self._i_clamp = gains.i_clamp
        self._kp_full = self._scatter(gains.kp)
        self._kd_full = self._scatter(gains.kd)
        self._ki_full = self._scatter(gains.ki)
        self._i_clamp_full = self._scatter(gains.i_clamp)
        self._h_full = self._scatter(gains.reference_inertia, fill=1.0)
        self._kp_acc_full = self._scatter(gains.kp_acc)
        self._kd_acc_full = self._scatter(gains.kd_acc)
        self._integral = np.zeros(len(self._joint_names))

    def _scatter(self, values, fill=0.0):
        """Command-order values -> model-order vector (fill for joints not commanded)."""
        full = np.full(self.model.nq, fill)
        full[self._cmd] = values
        return full

    def _apply_overrides(self, base: Gains, joints, config) -> Gains:
        return Gains(
            kp=self._resolve(config.kp, joints, base.kp, "kp"),
            kd=self._resolve(config.kd, joints, base.kd, "kd"),
            ki=self._resolve(config.ki, joints, base.ki, "ki"),
            i_clamp=self._resolve(config.i_clamp, joints, base.i_clamp, "i_clamp"),
            reference_inertia=base.reference_inertia,
        )

    @staticmethod
    def _resolve(value, joints, default, what):
        try:
            return resolve_per_joint(value, joints, default, what)
        except GainError as exc:
            raise ConfigError(str(exc)) from None

    def _effort_limits(self, model, command_index, joints):
        urdf = np.asarray(model.effort_limit, dtype=float)[command_index]
        limits = self._resolve(self.config.effort_limit, joints, np.where(np.isfinite(urdf), urdf, 0.0),
                               "effort_limit")
        missing = [j for j, lim in zip(joints, limits) if not lim > 0.0]
        if missing:
            raise ConfigError(
                f"joints {missing} have no positive <limit effort> in the URDF; torque control needs "
                "one (set effort_limit in the controller config to override)")
        return limits
