"""The controller: trajectory plan + control law + safety, behind one small API.

    controller = Controller(model, ControllerConfig(mode="computed_torque"))
    command = controller.update(now, names, q, qd)      # every control period
    command = controller.update(now, names, q, qd, age=age)   # with the state-age guard
    controller.set_trajectory(trajectory, now)          # on a new goal
    safe = controller.check_watchdog(now)               # every period; a Command when stale
    controller.contact.tau_ext, controller.contact.wrench   # with ControllerConfig(contact=...)
    controller.reset_collision(now)                     # after a collision (control/contact/)

Times are seconds on one clock (the node's, sim time or wall time). Vectors in a Command are
in command order (`controller.joint_names`). No rclpy here.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional, Sequence

import numpy as np

from rbd_control.dynamics import RbdError

from rbd_control.control.config import CheckedGoal, Command, ControllerConfig, ModelPlan
from rbd_control.control.contact.monitor import FLOAT, REFLEX
from rbd_control.control.contact.reactions import ContactReactions
from rbd_control.control.errors import MissingJointsError
from rbd_control.control.goals import GoalInputs
from rbd_control.control.laws import joint as laws
from rbd_control.control.laws.gain_table import GainTable, in_model_order
from rbd_control.control.laws.gains import GainValue, Gains
from rbd_control.control.laws.integral import IntegralTerm
from rbd_control.control.laws.inertia_schedule import InertiaSchedule
from rbd_control.control.model.plan import (carrying_payload, friction_compensation, plan_gains,
                                            plan_model)
from rbd_control.control.safety.age_guard import AgeGuard
from rbd_control.control.safety.answers import SafeActions
from rbd_control.control.safety.checks import (ConfigError, EffortLimiter, StateError, StateMapper,
                                               Watchdog)
from rbd_control.control.safety.oscillation import OscillationDetector
from rbd_control.control.throttle import ThrottledWarnings
from rbd_control.control.trajectory.plan import TrajectoryPlan
from rbd_control.params.bounds import finite
from rbd_control.params.controller import MODES, TRACKING_MODES

__all__ = ["MODES", "ControllerConfig", "Command", "Controller", "ModelPlan", "CheckedGoal"]


class Controller(GoalInputs, SafeActions, ContactReactions):
    """Model-based joint torque controller for one robot model. Not thread-safe."""

    def __init__(self, model, config: Optional[ControllerConfig] = None):
        self.config = config if config is not None else ControllerConfig()
        self.config.check()
        self.mode = self.config.mode
        self._watchdog = Watchdog(self.config.state_timeout)
        self.age_guard = AgeGuard(self.config.max_state_age,
                                  expected_period=self.config.expected_state_period)
        self._last_state = None          # (names, q, qd) as received, for set_model
        self._q = None                   # last valid state, model order
        self._qd = None
        self._last_update = None
        self._tripped = None             # safe action in force, or None
        self.ignored_old_states = 0      # states stamped before the last one (out of order)
        self._map = None                 # command order <-> model order
        self._gain_table = GainTable()   # what set_gains gave, kept across models
        self.oscillation = None          # the detector of this model's joints (set_model)
        self.abort_reason = ""           # why the controller last dropped a trajectory itself
        # repeated reasons, "reason + count": the node logs warnings.due(now) once per period
        self.warnings = ThrottledWarnings()
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

    @property
    def trajectory_generation(self) -> int:
        """Changes whenever the motion is replaced (a new trajectory, a hold, a watchdog trip,
        a new model), not when it moves onto a restarted clock: lets a caller tell whether
        the trajectory it set is still the one running."""
        return self._plan.generation

    @property
    def effort_limit(self) -> np.ndarray:
        """|tau| bound per joint in command order (URDF <limit effort> or the override)."""
        return self._plan_model.effort_limit

    def prepare_model(self, model) -> ModelPlan:
        """Check a model against the config and build what the controller needs of it.
        Pure: the controller is unchanged. Raises ConfigError with the reason."""
        # the running mode, not the start-up one: cartesian_impedance needs the ee_link
        return plan_model(model, self.config, self.warnings, getattr(self, "mode", None))

    def set_model(self, model):
        """Adopt a new robot model (a new robot_description), or a ModelPlan prepared for one.
        Drops any trajectory; joints that persist keep their current gains."""
        plan = model if isinstance(model, ModelPlan) else self.prepare_model(model)
        gains = self._gain_table.carried_over(plan.gains, plan.joints.names)
        self.model = self._bare_model = plan.model
        self._plan_model = plan
        self._map = plan.joints
        self._joint_names = plan.joints.names
        self._continuous = np.asarray(plan.model.continuous, dtype=bool)
        # the wrap masks the laws take, None when no joint is continuous (nothing to wrap)
        self._wrap = self._continuous if self._continuous.any() else None
        self._wrap_commanded = None if self._wrap is None else plan.joints.take(self._continuous)
        self._damping = plan.joints.put(plan.damping)   # model order
        self._qdd_full = np.zeros(plan.model.nq)        # scratch: desired qdd, model order
        self._limiter = EffortLimiter(plan.effort_limit, self.config.effort_scale)
        self._mapper = StateMapper(plan.model.joint_names, self.config.ignore_unknown_joints,
                                   commanded=plan.joints.index, fill=plan.fixed_positions,
                                   warnings=self.warnings)
        self._set_gain_arrays(gains)
        self.oscillation = OscillationDetector(self._joint_names, self.config.oscillation)
        self._plan = TrajectoryPlan(len(self._joint_names))
        self._cartesian = plan.cartesian
        if self.mode == "cartesian_impedance" and plan.cartesian is None:
            # prepared while another mode ran (prepare_model refuses it otherwise)
            self.mode = "gravity_compensation"
            self.warnings.warn("cartesian_lost", "the new model has no ee_link: mode "
                               "cartesian_impedance left for gravity_compensation")
        self._contact = self._contact_monitor(plan)
        self._remap_last_state()

    def set_friction(self, friction: Optional[dict], epsilon: Optional[float] = None):
        """Replace the friction compensation of this model: {joint: {"viscous": b, "coulomb":
        f_c}} (joints not named, or given zeros, get the URDF's with use_urdf_friction, else
        none), optionally with another epsilon. Raises ConfigError.
        A later set_model starts again from the config's friction (the node re-applies its
        friction.* parameters after every model)."""
        epsilon = self.config.friction_epsilon if epsilon is None else epsilon
        compensation = friction_compensation(self.model, friction, epsilon,
                                             self.config.use_urdf_friction)
        self._plan_model = replace(self._plan_model, friction=compensation)

    def set_payload(self, link: str, mass: float, com=(0.0, 0.0, 0.0), inertia=None):
        """Carry a rigid payload on `link` from now on (replacing any earlier one; link None
        or mass 0 removes it): mass in kg, com and inertia (about the COM: 3 moments or 3x3) in
        the link frame. Raises ConfigError.

        The default gains follow the payload: they are the bandwidth rule on the inertia the
        arm now carries (a 1.5 kg tool multiplies a wrist's by 10-30; gains derived without it
        track ~3x worse). Gains given by the config or set_gains, the integral and the
        trajectory in progress are kept."""
        model = carrying_payload(self._bare_model, link, mass, com, inertia)
        plan = self._plan_model
        defaults = plan_gains(model, plan.joints, plan.effort_limit, self.config)
        integral = self._integral.value
        self._set_gain_arrays(self._gain_table.carried_over(defaults, self._joint_names))
        self._integral.value = integral
        self.model = model
        if self._contact is not None:
            self._contact.set_model(model)   # the observer's model side carries the payload

    def check_payload(self, link: str, mass: float, com=(0.0, 0.0, 0.0), inertia=None):
        """Raise ConfigError unless set_payload would take these (pure: nothing changes)."""
        carrying_payload(self._bare_model, link, mass, com, inertia)

    def set_gains(self, kp: GainValue = None, kd: GainValue = None, ki: GainValue = None,
                  i_clamp: GainValue = None):
        """Change some gains (same value forms as ControllerConfig); None leaves one as is.
        Resets the integral term."""
        given = {"kp": kp, "kd": kd, "ki": ki, "i_clamp": i_clamp}
        self._set_gain_arrays(self._gain_table.change(self.gains, self._joint_names, given))
        self.oscillation.reset()   # new gains: full scale until they oscillate too

    def set_mode(self, mode: str, now: float):
        """Switch law. Resets the integral term; entering a tracking mode from
        gravity_compensation holds the measured pose, so the torque changes only by what the
        new law asks for at this state."""
        if mode not in MODES:
            raise ConfigError(f"mode {mode!r} is not one of {MODES}")
        if mode == "cartesian_impedance" and self._cartesian is None:
            raise ConfigError("mode cartesian_impedance needs ee_link in the controller config")
        if mode == self.mode:
            return
        if mode == "cartesian_impedance":
            self._cartesian.deactivate()   # anchored at the next measured state
        previous, self.mode = self.mode, mode
        self._integral.reset()
        if mode in TRACKING_MODES and (previous not in TRACKING_MODES or self._plan.empty):
            self._hold_measured(now)

    def hold(self, now: float):
        """Stop following the trajectory and hold the measured pose (cancel / abort)."""
        self._hold_measured(now)

    # --- the control loop -------------------------------------------------------------

    def update(self, now: float, names: Sequence[str], q, qd, age: Optional[float] = None,
               effort=None) -> Command:
        """Compute the command for a measured state. Raises StateError for a bad state.

        age: how old the state is (seconds from its measurement to now), if known; beyond
        config.max_state_age the feedback is softened (age_guard.py). effort: the measured
        joint efforts in `names` order (read only with contact.use_measured_effort)."""
        if not finite(now):
            raise StateError(f"now is not a finite time: {now!r}")
        try:
            q_m, qd_m = self._mapper.map(names, q, qd)
        except MissingJointsError as exc:
            return self._safe_for_missing(exc)
        self._check_time_order(now)
        self._prepare_plan(now, q_m)
        if age is not None and self.age_guard.observe(age, now):
            self._hold_measured(now, q_m)   # late states cannot track a trajectory
        contact = self._contact
        try:
            reaction = None if contact is None else self._observe_contact(now, names, q_m, qd_m,
                                                                          effort)
            if reaction == FLOAT:
                command = self._float(q_m, qd_m)
            elif reaction == REFLEX:
                command = self._reflex(q_m, qd_m)
            elif self.mode == "gravity_compensation":
                command = self._float(q_m, qd_m)
            elif self.mode == "cartesian_impedance":
                command = self._impedance(now, q_m, qd_m)
            else:
                command = self._track(now, q_m, qd_m)
        except StateError:
            raise
        except RbdError as exc:  # the dynamics refused the state: report, never crash
            raise StateError(f"dynamics rejected the state: {exc}") from exc
        if contact is not None:
            contact.applied(command.tau, command.desired_qdd)
        # only a state that produced a valid command counts as fresh for the watchdog
        self._accept_state(now, names, q, qd, q_m, qd_m)
        self._watch_oscillation(now, command, q_m)
        return command

    # --- internals --------------------------------------------------------------------

    def _check_time_order(self, now):
        """A state older than the last one: out of order by up to state_timeout, it is ignored
        (StateError, counted) and the trajectory goes on; older than that, the clock restarted
        (a simulator reset): the plan moves onto the new clock, so the motion goes on too."""
        last = self._last_update
        if last is None or now >= last:
            return
        if last - now <= self.config.state_timeout:
            self.ignored_old_states += 1
            raise StateError(
                f"state stamped {now:.6f} s is older than the last one ({last:.6f} s); ignored "
                f"({self.ignored_old_states} so far)")
        self._plan.shift_time(now - last)

    def _prepare_plan(self, now, q):
        """Before a law runs on a new state: handle a stale gap and give the plan an anchor."""
        if self._q is not None and self._tripped is None and self._watchdog.is_stale(now):
            # a gap longer than state_timeout counts as stale even if nobody asked the
            # watchdog in between: the trajectory is aborted the same way
            self._trip()
        if self._tripped == "zero" or self._plan.empty:
            # first state, or after zero effort (the arm has moved): hold where it is now
            self._plan.hold(self._map.take(q), now)

    def _accept_state(self, now, names, q, qd, q_m, qd_m):
        self._last_state = (tuple(names), np.array(q, dtype=float), np.array(qd, dtype=float))
        self._q, self._qd = q_m, qd_m
        self._watchdog.feed(now)
        self._tripped = None
        self._last_update = now

    def _float(self, q, qd):
        ff, fb = laws.gravity_compensation(self.model, q, qd, self.feedback_scale * self._damping)
        take, n = self._map.take, len(self._map)
        q_c = take(q)
        return self._finish(take(ff), take(fb), q_c.copy(), take(qd), np.zeros(n), np.zeros(n),
                            q_c, qd, integrate=False, holding=True)

    def _track(self, now, q, qd):
        q_d, qd_d, qdd_d, effort_d = self._plan.sample(now)
        joints, g = self._map, self._model_order_gains
        put, take = joints.put_into, joints.take
        q_full, qd_full = put(q.copy(), q_d), put(qd.copy(), qd_d)
        qdd_full = put(self._qdd_full, qdd_d)
        # model order; the joints not commanded have q_full = q there, so no error
        error = laws.position_error(q_full, q, self._wrap)
        # the integral term as a torque, bounded by i_clamp (anti-windup, see _integrate);
        # None while no joint has ki > 0 (the integral then stays 0)
        i_term = (np.clip(g.ki * joints.put(self._integral.value), -g.i_clamp, g.i_clamp)
                  if self._integral.active else None)
        s = self.feedback_scale   # bandwidth scale: Kp -> s^2 Kp, Kd -> s Kd (age_guard.py)
        if self.mode == "feedforward_pd":
            kp, kd = self._pd_gains_at(q)
            kp, kd = (kp, kd) if s == 1.0 else (s * s * kp, s * kd)
            ff, fb = laws.feedforward_pd(self.model, q, qd, q_full, qd_full, qdd_full, kp, kd,
                                         i_term=i_term, error=error)
        else:
            kp, kd = self._acc_gains
            kp, kd = (kp, kd) if s == 1.0 else (s * s * kp, s * kd)
            acc_i = None if i_term is None else i_term / g.reference_inertia
            ff, fb = laws.computed_torque(self.model, q, qd, q_full, qd_full, qdd_full, kp, kd,
                                          acc_i=acc_i, error=error)
        ff_c = take(ff)
        ff_c += effort_d  # JTC semantics: a point's effort is a feedforward torque
        if self._plan_model.friction.active:
            ff_c += take(self._plan_model.friction.torque(qd_full))   # at the desired velocity
        return self._finish(ff_c, take(fb), q_d.copy(), qd_d.copy(), qdd_d.copy(), take(error),
                            take(q), qd, integrate=True, now=now,
                            holding=self._plan.finished(now))

    def _impedance(self, now, q, qd):
        law = self._cartesian
        if self._tripped is not None or not law.active:   # first state, or after a stale gap
            law.activate(self.model, q, now)
        # the model with the payload, as every law; scale: the feedback's bandwidth scale
        ff, fb = law.torques(self.model, q, qd, now, self.feedback_scale)
        take, n = self._map.take, len(self._map)
        posture, q_c = take(law.posture), take(q)
        error = laws.position_error(posture, q_c, self._wrap_commanded)
        return self._finish(take(ff), take(fb), posture, np.zeros(n), np.zeros(n), error, q_c, qd,
                            integrate=False, holding=now >= law.end_time)

    def _finish(self, ff_c, fb_c, q_d, qd_d, qdd_d, error, q_c, qd, *, integrate, holding,
                now=None):
        """The command of one state; every vector in command order and owned by the Command,
        except qd (model order)."""
        tau, saturated = self._limiter.clamp(ff_c + fb_c)
        if integrate:
            self._integrate(now, error, tau, saturated)
        return Command(tau=tau, desired_q=q_d, desired_qd=qd_d, desired_qdd=qdd_d, error=error,
                       feedforward=ff_c, feedback=fb_c, mode=self.mode,
                       joint_names=self._joint_names, saturated=saturated, holding=holding,
                       actual_q=q_c, actual_qd=self._map.take(qd),
                       feedback_scale=self.feedback_scale)

    def _integrate(self, now, error, tau, saturated):
        """The integral term (integral.py), never over a first step, a clock jump, a gap or
        late states."""
        if not self._integral.active or self._last_update is None or self.age_guard.engaged:
            return
        dt = now - self._last_update
        if 0.0 < dt <= self.config.state_timeout:
            self._integral.integrate(dt, error, tau, saturated)

    def _hold_measured(self, now, q=None):
        """Hold q (model order; default: the last accepted state) from now on."""
        q = self._q if q is None else q
        self._integral.reset()
        if q is None:
            self._plan = TrajectoryPlan(len(self._joint_names))  # re-anchored by the first state
        else:
            self._plan.hold(self._map.take(q), now)

    def _remap_last_state(self):
        """After a model change, keep the last state if it covers the new model's joints."""
        self._q = self._qd = None
        if self._last_state is None:
            return
        try:
            self._q, self._qd = self._mapper.map(*self._last_state)
        except MissingJointsError as exc:  # hold where the robot was, missing joints filled
            self._q, self._qd = exc.q, exc.qd
        except StateError:
            self._last_state = None

    def gains_at(self, q):
        """(kp, kd) in command order that feedforward_pd applies at the model-order pose q:
        the gains, the default-rule joints' scaled by their inertia there (inertia_schedule.py);
        before any softening by the age guard or the oscillation answer."""
        kp, kd = self._pd_gains_at(q)
        return self._map.take(kp), self._map.take(kd)

    def _pd_gains_at(self, q):
        """Model-order kp, kd at the model-order pose q (inertia_schedule.py)."""
        g = self._model_order_gains
        if self._schedule is None:
            return g.kp, g.kd
        at_pose = self._schedule.scale(self.model, q)
        return g.kp * at_pose, g.kd * at_pose

    def _set_gain_arrays(self, gains: Gains):
        self.gains, self._model_order_gains = gains, in_model_order(gains, self._map)
        scheduled = self._model_order_gains.scheduled
        self._schedule = (InertiaSchedule(self.model, self._model_order_gains.reference_inertia,
                                          scheduled)
                          if self.config.inertia_scheduling and scheduled is not None
                          and scheduled.any() else None)
        self._acc_gains = (self._model_order_gains.kp_acc, self._model_order_gains.kd_acc)
        self._integral = IntegralTerm(len(self._joint_names))
        self._integral.set_gains(gains.ki, gains.i_clamp)
