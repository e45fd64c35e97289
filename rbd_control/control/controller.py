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

The Controller is the face of the core: one class that owns the motion (the trajectory plan,
the integral term, the last accepted state) and composes the parts that decide about it, each
in its own module and none able to call back into this one (test_layout.py):
    safety/supervisor.py   LoopSupervisor: watchdog, safe action in force, age guard,
                           oscillation -> trip, feedback scale, hold
    contact/monitor.py     ContactMonitor.decide: the observer, the detector and the reaction
                           in force; check_no_collision refuses goals while one is latched
    trajectory/            check_goal (JTC's rules), check_follows_trajectories, the plan
    laws/                  the control laws, the gains, the Cartesian impedance and its targets
    model/plan.py          what the controller needs of one model (prepare_model)
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional, Sequence

import numpy as np

from rbd_control.dynamics import RbdError

from rbd_control.control.config import Command, ControllerConfig, ModelPlan
from rbd_control.control.contact.monitor import (FLOAT, REFLEX, ContactMonitor, check_no_collision,
                                                 contact_monitor, wrench_link)
from rbd_control.control.errors import ConfigError, MissingJointsError, StateError, TrajectoryError
from rbd_control.control.laws import joint as laws
from rbd_control.control.laws.cartesian_mode import (check_takes_cartesian_goals, checked_pose,
                                                     checked_wrench)
from rbd_control.control.laws.gain_table import GainTable, in_model_order
from rbd_control.control.laws.gains import Gains
from rbd_control.control.laws.per_joint import GainValue
from rbd_control.control.laws.integral import IntegralTerm
from rbd_control.control.laws.joint_impedance import check_takes_joint_targets
from rbd_control.control.laws.inertia_schedule import InertiaSchedule
from rbd_control.control.model.shadow import ShadowPrediction
from rbd_control.control.model.plan import (carrying_payload, friction_compensation, plan_gains,
                                            plan_model, softened)
from rbd_control.control.safety.checks import EffortLimiter, StateMapper, safe_command
from rbd_control.control.safety.command_limits import CommandLimits
from rbd_control.control.safety.oscillation import HOLD
from rbd_control.control.safety.supervisor import LoopSupervisor
from rbd_control.control.throttle import ThrottledWarnings
from rbd_control.control.trajectory.message import JointTrajectory
from rbd_control.control.trajectory.plan import TrajectoryPlan
from rbd_control.control.trajectory.validation import (CheckedGoal, check_follows_trajectories,
                                                       check_goal)
from rbd_control.params.bounds import finite
from rbd_control.params.controller import MODES, TRACKING_MODES

__all__ = ["Controller"]


class Controller:
    """Model-based joint torque controller for one robot model. Not thread-safe.

    Its parts are composed members, each with its own file: the loop's supervisor
    (safety/supervisor.py: watchdog, safe action, age guard, oscillation), the contact monitor
    (contact/monitor.py), the trajectory plan (trajectory/plan.py) and the laws (laws/). They
    return decisions; this class applies them, since it owns the plan and the integral term."""

    def __init__(self, model, config: Optional[ControllerConfig] = None):
        self.config = config if config is not None else ControllerConfig()
        self.config.check()
        self.mode = self.config.mode
        self._supervisor = LoopSupervisor(self.config)
        self._last_state = None          # (names, q, qd) as received, for set_model
        self._q = None                   # last valid state, model order
        self._qd = None
        self._last_update = None
        self.ignored_old_states = 0      # states stamped before the last one (out of order)
        self._map = None                 # command order <-> model order
        self._limits = None              # the last terms of every command (command_limits.py)
        self._gain_table = GainTable()   # what set_gains gave, kept across models
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

    @property
    def command_limits(self):
        """The last terms of every command (safety/command_limits.py): .acting() counts."""
        return self._limits

    @property
    def age_guard(self):
        """The late-state guard (safety/age_guard.py)."""
        return self._supervisor.age_guard

    @property
    def oscillation(self):
        """The oscillation detector of this model's joints (safety/oscillation.py)."""
        return self._supervisor.oscillation

    @property
    def feedback_scale(self) -> float:
        """Bandwidth scale of the feedback: the age guard's times the oscillation answer's."""
        return self._supervisor.feedback_scale

    @property
    def contact(self) -> Optional[ContactMonitor]:
        """The observer, wrench estimate and detector (None unless config.contact is set):
        .tau_ext (command order), .wrench ([fx..tz] at .wrench_estimator.link, world axes),
        .detector (flags), .collided, .reason."""
        return self._contact

    @property
    def softened(self) -> tuple:
        """What the loop design softens of what was asked (laws/loop_design.py's Softened
        records: name, requested, applied): the Cartesian task stiffness at the zero pose and
        the nullspace stiffness; () when nothing is. The joint gains are never softened."""
        return self._plan_model.softened

    @property
    def cartesian_state(self):
        """The last cartesian_impedance step (pose, target, error, wrench), or None."""
        return None if self._cartesian is None else self._cartesian.last

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
        self._limits = CommandLimits(plan.model, plan.joints, self._limiter.limit, self.config,
                                     *plan.limit_gains, self.warnings, self._limits)
        self._shadow = ShadowPrediction()   # shadow mode's torque of the measured state
        self._mapper = StateMapper(plan.model.joint_names, self.config.ignore_unknown_joints,
                                   commanded=plan.joints.index, fill=plan.fixed_positions,
                                   warnings=self.warnings)
        self._set_gain_arrays(gains)
        self._supervisor.watch_joints(self._joint_names)
        self._plan = TrajectoryPlan(len(self._joint_names))
        self._cartesian, self._joint_target = plan.cartesian, plan.joint_target
        self._joint_target.keep_within(self._limits.joints.soft_range)   # off the stops
        if self.mode == "cartesian_impedance" and plan.cartesian is None:
            # prepared while another mode ran (prepare_model refuses it otherwise)
            self.mode = "gravity_compensation"
            self.warnings.warn("cartesian_lost", "the new model has no ee_link: mode "
                               "cartesian_impedance left for gravity_compensation")
        self._contact = contact_monitor(self.config.contact, self.config.ee_link, plan,
                                        self.config.state_timeout)
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
        arm now carries (the demo's 1.5 kg tool: wrist_2's x4.4, wrist_3's x5.1; gains without it
        track ~3x worse). Gains given by the config or set_gains, the integral and the
        trajectory in progress are kept."""
        model = carrying_payload(self._bare_model, link, mass, com, inertia)
        plan = self._plan_model
        defaults = plan_gains(model, plan.joints, plan.effort_limit, self.config)
        integral = self._integral.value
        self._set_gain_arrays(self._gain_table.carried_over(defaults, self._joint_names))
        self._integral.value = integral
        self.model = model
        # the task stiffness the design allows moves with the inertia carried
        self._plan_model = replace(plan, softened=softened(model, self._cartesian))
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
        self._joint_target.deactivate()    # likewise joint_impedance's
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
            return self._safe_for_missing(exc, now)
        self._check_time_order(now)
        self._prepare_plan(now, q_m)
        if self._supervisor.late(age, now):
            self._hold_measured(now, q_m)   # late states cannot track a trajectory
        contact = self._contact
        try:
            reaction = None if contact is None else self._contact_reaction(now, names, q_m,
                                                                           qd_m, effort)
            if self.mode == "shadow":      # nothing commanded: no reaction either
                command = self._predict(now, q_m, qd_m)
            elif reaction == FLOAT:
                command = self._float(q_m, qd_m)
            elif reaction == REFLEX:
                command = self._reflex(q_m, qd_m)
            elif self.mode == "gravity_compensation":
                command = self._float(q_m, qd_m)
            elif self.mode == "cartesian_impedance":
                command = self._impedance(now, q_m, qd_m)
            elif self.mode == "joint_impedance":
                command = self._joint_impedance(now, q_m, qd_m)
            else:
                command = self._track(now, q_m, qd_m)
        except StateError:
            raise
        except RbdError as exc:  # the dynamics refused the state: report, never crash
            raise StateError(f"dynamics rejected the state: {exc}") from exc
        # last: joint limits, gravity omitted, torque rate (in place); shadow publishes nothing
        felt = (command.tau if self.mode == "shadow"
                else self._limits.apply(command.tau, now, q_m, qd_m, self.model))
        if contact is not None:   # the torque the joints feel, the robot's gravity included
            contact.applied(felt, command.desired_qdd)
        # only a state that produced a valid command counts as fresh for the watchdog
        self._accept_state(now, names, q, qd, q_m, qd_m)
        self._watch_oscillation(now, command, q_m)
        return command

    # --- goals: trajectories (JTC's) and Cartesian targets ----------------------------

    def set_trajectory(self, trajectory: JointTrajectory, now: float):
        """Start (or replace) a trajectory; raise TrajectoryError with the reason if rejected.
        Equivalent to install_trajectory(check_trajectory(trajectory, now), now)."""
        self._check_can_follow(now)  # the cheap refusals before the per-point work
        self.install_trajectory(self.check_trajectory(trajectory, now), now)

    def check_trajectory(self, trajectory: JointTrajectory, received: float) -> CheckedGoal:
        """The per-point work of set_trajectory: validation and the segments between points;
        `received` (the arrival time) is the "now" of start_time 0. Reads only the model and
        configuration, never the control state, so a node may run it on another thread while
        the control loop keeps answering states (and feeding the watchdog), then hand the
        result to install_trajectory on the control thread."""
        # the limits are the URDF's, payload or not
        return check_goal(trajectory, self._bare_model, self._map, self.config, received)

    def install_trajectory(self, goal: CheckedGoal, now: float):
        """Blend a checked trajectory in from the current desired state: O(joints)."""
        if goal.model is not self._bare_model or goal.joint_names != self._joint_names:
            raise TrajectoryError("the robot model changed while the trajectory was checked")
        self._check_can_follow(now)
        self.abort_reason = ""      # a new goal: nothing of it has been aborted yet
        if self._plan.empty:
            self._plan.hold(self._map.take(self._q), now)
        self._plan.blend_in(goal.checked, now, continuous=self._map.take(self._continuous))

    def set_pose_target(self, position, quaternion_xyzw, now: float):
        """Move the end effector to a pose (base frame) along a minimum-jerk path from the
        current target (pose.py); TrajectoryError with the reason if rejected."""
        self._check_cartesian_goal(now)
        self._cartesian.set_pose_target(*checked_pose(position, quaternion_xyzw), now)

    def set_wrench_target(self, wrench, now: float):
        """Feedforward wrench [fx, fy, fz, tx, ty, tz] (base axes, at the end-effector
        origin), ramped in; TrajectoryError with the reason if rejected."""
        self._check_cartesian_goal(now)
        self._cartesian.set_wrench_target(checked_wrench(wrench), now)

    def set_cartesian_stiffness(self, stiffness):
        """cartesian_impedance's task stiffness from now on (cartesian_stiffness: variable
        impedance); ConfigError, also above what the loop holds at the measured pose
        (CartesianImpedance.set_stiffness). Without an ee_link, kept for a model with one."""
        config = replace(self.config, cartesian_stiffness=stiffness)
        config.check()
        if self._cartesian is not None:
            self._cartesian.set_stiffness(stiffness, self.model, self._q)
            self._plan_model = replace(self._plan_model,
                                       softened=softened(self.model, self._cartesian))
        self.config = config   # a new model's law takes it too

    def set_joint_target(self, names, positions, velocities=None, now: float = 0.0):
        """joint_impedance: a streamed target by joint name, velocities optional
        (laws/joint_impedance.py); TrajectoryError naming what is wrong."""
        check_takes_joint_targets(self.mode)
        check_no_collision(self._contact)
        self._supervisor.check_fresh(now, self._q is not None and self._joint_target.active,
                                     " in joint_impedance")
        self._joint_target.set_target(names, positions, velocities, now)

    def set_joint_stiffness(self, names, stiffness, damping_ratio=None):
        """joint_impedance: K (N m/rad) and optionally the damping ratio of the named joints."""
        self._joint_target.set_stiffness(names, stiffness, damping_ratio)

    def _check_can_follow(self, now):
        check_no_collision(self._contact)
        check_follows_trajectories(self.mode)
        self._supervisor.check_fresh(now, self._q is not None)

    def _check_cartesian_goal(self, now):
        check_no_collision(self._contact)
        check_takes_cartesian_goals(self.mode)
        self._supervisor.check_fresh(now, self._q is not None and self._cartesian.active,
                                     " in cartesian_impedance")

    # --- contact: the reaction in force, the settings, a reset ------------------------

    def reset_collision(self, now: float):
        """Clear a latched collision (libfranka's automaticErrorRecovery) and hold the measured
        pose. ContactResetError while the residual still shows contact; ConfigError when
        contact awareness is off."""
        if self._contact is None:
            raise ConfigError("contact awareness is off (ControllerConfig.contact is None)")
        self._contact.reset()
        self.abort_reason = ""
        if self._q is not None:
            self._hold_measured(now)

    def set_contact(self, config):
        """Change the contact settings (a ContactConfig; None: off) from the next state on.
        With the same wrench link, r, the flags and a latched collision are kept; otherwise
        the observer starts afresh. Raises ConfigError (ContactConfigError) with the reason."""
        if config is not None:
            config.check()
        old, new = self._contact, replace(self.config, contact=config)
        link = (None if config is None
                else wrench_link(config, new.ee_link, self.model.link_names))
        self.config = new                          # nothing changed if that raised
        if old is not None and config is not None and link == old.wrench_estimator.link:
            old.reconfigure(config)
            return
        self._contact = contact_monitor(config, new.ee_link, self._plan_model,
                                        new.state_timeout)
        if self._contact is not None and self.model is not self._plan_model.model:
            self._contact.set_model(self.model)   # the payload carried

    def _contact_reaction(self, now, names, q, qd, effort):
        """The observer and detector on this state (contact/monitor.py); the reaction in force
        (FLOAT, REFLEX or None). A collision that latches now aborts the motion and holds."""
        contact = self._contact
        measured = (self._mapper.map_effort(names, effort)
                    if contact.config.use_measured_effort else None)
        decision = contact.decide(now, q, qd, measured, self._plan_model.friction)
        if decision.latched:
            self.abort_reason = contact.reason     # the collision that latched
        if decision.hold:
            self._hold_measured(now, q)            # aborts the trajectory (a new generation)
            if self.mode == "cartesian_impedance":
                self._cartesian.activate(self.model, q, now)   # hold the pose reached
            self._joint_target.activate(self._map.take(q), now)
        return decision.override

    # --- safe actions: stale states, missing joints, an oscillating loop --------------

    def check_watchdog(self, now: float, stopping: bool = False) -> Optional[Command]:
        """None while states are fresh; otherwise the safe command (and the trajectory is
        aborted). 'hold' commands the gravity torque of the last measured pose (no feedback:
        there is no fresh state to feed back); 'zero' commands zero effort. stopping: the
        process ends: the safe command whatever the states (the last one it publishes)."""
        if not stopping and not self._supervisor.stale(now):
            return None
        if self._supervisor.trip(self.config.safe_action):
            self._abort_for_safe_action()
        return self._limited(now, safe_command(self._supervisor.tripped, self.model, self._q,
                                               self._map, self._limiter), self._q)

    def _abort_for_safe_action(self):
        """A safe action came into force: abort the trajectory and reset the integral."""
        self._integral.reset()
        if self._q is not None and self._supervisor.tripped == "hold":
            self._plan.hold(self._map.take(self._q))
        else:
            self._plan = TrajectoryPlan(len(self._joint_names))

    def _safe_for_missing(self, exc: MissingJointsError, now: float) -> Command:
        """A state lacks commanded joints (e.g. a robot whose joint was renamed): take the
        configured safe action now, at the best-known pose: the measured joints from this
        state, the missing ones from the last valid state (or fixed_positions / zero)."""
        q, qd = exc.q, exc.qd
        if self._q is not None:
            q[exc.missing] = self._q[exc.missing]
        self._q, self._qd = q, qd
        if self._supervisor.trip(self.config.safe_action):
            self._abort_for_safe_action()
        tripped = self._supervisor.tripped
        self.warnings.warn("missing_joints", f"{exc}; {tripped} until they return")
        command = safe_command(tripped, self.model, q, self._map, self._limiter)
        command.reason = str(exc)
        return self._limited(now, command, q)

    def _limited(self, now, command, q):
        """A safe command through the last terms (command_limits.py), with no fresh velocity;
        'zero' holds nothing, so nothing of gravity is omitted from it."""
        self._limits.apply(command.tau, now, q, None, self.model, command.mode != "safe_zero")
        return command

    def _watch_oscillation(self, now, command, q_m):
        """Soften the gains when the loop oscillates, and hold if it goes on
        (safety/oscillation.py)."""
        tracking = self.mode in TRACKING_MODES
        action = self._supervisor.oscillation_answer(now, command, self.gains, tracking)
        if action is None:
            return
        self.warnings.warn("oscillation", self.oscillation.reason)
        if action == HOLD and tracking:
            self.abort_reason = self.oscillation.reason
            self._hold_measured(now, q_m)

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
        supervisor = self._supervisor
        if supervisor.gap_trips(now, self._q is not None, self.config.safe_action):
            # a gap longer than state_timeout counts as stale even if nobody asked the
            # watchdog in between: the trajectory is aborted the same way
            self._abort_for_safe_action()
        if supervisor.tripped == "zero" or self._plan.empty:
            # first state, or after zero effort (the arm has moved): hold where it is now
            self._plan.hold(self._map.take(q), now)

    def _accept_state(self, now, names, q, qd, q_m, qd_m):
        self._last_state = (tuple(names), np.array(q, dtype=float), np.array(qd, dtype=float))
        self._q, self._qd = q_m, qd_m
        self._supervisor.fed(now)
        self._last_update = now

    def _float(self, q, qd):
        ff, fb = laws.gravity_compensation(self.model, q, qd, self.feedback_scale * self._damping)
        take, n = self._map.take, len(self._map)
        q_c = take(q)
        return self._finish(take(ff), take(fb), q_c.copy(), take(qd), np.zeros(n), np.zeros(n),
                            q_c, qd, integrate=False, holding=True)

    def _predict(self, now, q, qd):
        """Shadow mode: feedforward = the model's torque at the measured state (model/shadow.py),
        which the node publishes on ~/shadow_effort, never as a command."""
        ff, take, n = self._shadow.torque(self.model, now, q, qd, self._plan_model.friction), \
            self._map.take, len(self._map)
        return self._finish(take(ff), np.zeros(n), take(q), take(qd), np.zeros(n), np.zeros(n),
                            take(q), qd, integrate=False, holding=True)

    def _reflex(self, q, qd):
        """tau = g + K_R r (the observer's g and r of this state)."""
        take, n = self._map.take, len(self._map)
        q_c = take(q)
        return self._finish(take(self._contact.reflex_torque()), np.zeros(n), q_c.copy(),
                            np.zeros(n), np.zeros(n), np.zeros(n), q_c, qd, integrate=False,
                            holding=True)

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
        # the first state, or the first after a stale gap
        if self._supervisor.tripped is not None or not law.active:
            law.activate(self.model, q, now)
        # the model with the payload, as every law; scale: the feedback's bandwidth scale
        ff, fb = law.torques(self.model, q, qd, now, self.feedback_scale)
        take, n = self._map.take, len(self._map)
        posture, q_c = take(law.posture), take(q)
        error = laws.position_error(posture, q_c, self._wrap_commanded)
        return self._finish(take(ff), take(fb), posture, np.zeros(n), np.zeros(n), error, q_c, qd,
                            integrate=False, holding=now >= law.end_time)

    def _joint_impedance(self, now, q, qd):
        law = self._joint_target
        if self._supervisor.tripped is not None or not law.active:
            law.activate(self._map.take(q), now)   # hold the measured pose
        ff, fb, q_t, qd_t, error = law.torques(self.model, self._map, q, qd, now,
                                               self.feedback_scale, self._plan_model.friction)
        return self._finish(ff, fb, q_t, qd_t, np.zeros(len(self._map)), error,
                            self._map.take(q), qd, integrate=False, holding=law.held)

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
        if (not self._integral.active or self._last_update is None
                or self._supervisor.age_guard.engaged):
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
