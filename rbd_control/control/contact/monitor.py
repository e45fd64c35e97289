"""The contact features as the Controller runs them on every state: the observer, the wrench,
the detector, and the reaction's timing. The Controller applies the reaction (it owns the
plan and the laws); this module says which one is in force.

Reactions to a collision (De Luca, Albu-Schaeffer, Haddadin, Hirzinger, IROS 2006):
    none    report only
    hold    abort the trajectory (or Cartesian motion) and hold the measured pose
    float   abort and command gravity compensation only, until reset
    reflex  abort, command tau = g + K_R r for reflex_duration (the arm yields along the
            external torque), then hold the pose reached
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from rbd_control.control.contact.applied import AppliedTorque
from rbd_control.control.contact.detection import CollisionDetector, CollisionThresholds
from rbd_control.control.contact.observer import MomentumObserver
from rbd_control.control.contact.wrench import WrenchEstimator
from rbd_control.control.errors import ConfigError, TrajectoryError

__all__ = ["ContactMonitor", "ContactDecision", "HOLD", "FLOAT", "REFLEX", "contact_monitor",
           "wrench_link", "check_no_collision"]

HOLD, FLOAT, REFLEX = "hold", "float", "reflex"
# The hold brakes first: it re-anchors at each measured pose (the feedback only damps) until
# every commanded joint is below BRAKED_SPEED, for at most BRAKE_S, then holds the pose reached.
# Holding the pose measured at the latch instead pulled back what the impact had spun on (the
# default arm's wrist_3 at 4.7 rad/s): with the shipped config's gains the arm stopped 365 ms
# after the detection, swinging back at up to 0.7 rad/s (test_contact_hold.py; 131 ms braked).
BRAKED_SPEED = 0.05    # rad/s (m/s)
BRAKE_S = 0.3          # s


class ContactDecision(NamedTuple):
    """What the Controller does with one state (ContactMonitor.decide)."""

    latched: bool             # a collision latched now (its reason: ContactMonitor.reason)
    hold: bool                # abort the motion and hold the measured pose
    override: Optional[str]   # FLOAT or REFLEX replaces the law; None: the law runs


def wrench_link(contact_config, ee_link: str, links) -> str:
    """The link the external wrench is estimated at: contact.wrench_link, else ee_link, else
    the last link. ConfigError when the model has no such link."""
    link = contact_config.wrench_link or ee_link or links[-1]
    if link not in links:
        raise ConfigError(f"contact.wrench_link {link!r} is not a link of the model")
    return link


def contact_monitor(contact_config, ee_link: str, plan, max_gap: float):
    """The ContactMonitor of one ModelPlan (None when contact_config is None: awareness off)."""
    if contact_config is None:
        return None
    link = wrench_link(contact_config, ee_link, plan.model.link_names)
    return ContactMonitor(contact_config, plan.model, plan.joints, max_gap, link)


def check_no_collision(monitor: Optional["ContactMonitor"]):
    """A latched collision (with a reaction) refuses new goals until it is reset."""
    if monitor is not None and monitor.collided and monitor.config.reaction != "none":
        raise TrajectoryError(f"{monitor.reason}; reset it first (reset_collision)")


class ContactMonitor:
    """One per model. Vectors in: model order (q, qd, effort), command order (tau applied)."""

    def __init__(self, config, model, joints, max_gap: float, link: str):
        """config: a checked ContactConfig; joints: the controller's JointMap; link: the wrench
        frame (already resolved and checked against the model)."""
        self._joints = joints
        self.observer = MomentumObserver(model, config.observer_gain, max_gap)
        self.wrench_estimator = WrenchEstimator(model, link, config.wrench_damping)
        self.detector = CollisionDetector(CollisionThresholds.from_config(config, len(joints)),
                                          joints.names)
        n_model = model.nq
        # the commands sent (model order) and the torque in force over a step
        self._sent = AppliedTorque(n_model, config.command_delay)
        self.reconfigure(config)
        self._applied = np.zeros(n_model)          # scratch: the command sent, model order
        self._tau = np.empty(n_model)              # scratch: tau minus friction
        self._commanded = np.zeros(n_model, bool)
        self._commanded[joints.index] = True
        self._r_commanded = np.zeros(n_model)      # r on the commanded joints, 0 elsewhere
        # every model joint commanded in model order (the usual case): r is tau_ext itself
        self._identity = bool(np.array_equal(joints.index, np.arange(n_model)))
        self.tau_ext = self.observer.r if self._identity else np.zeros(len(joints))
        self.wrench = self.wrench_estimator.wrench
        self._accelerating = False
        self._reflex_until = None                  # end time of a running reflex
        self.detected_at = None                    # control time the collision latched
        self._previous = self._now = None          # control times of the last two states
        self._braking_until = None                 # end of the hold's braking (None: not)

    def reconfigure(self, config):
        """Another checked ContactConfig with the same wrench link: gain, levels, reaction,
        damping take effect at the next state; r, the flags and a latched collision are kept."""
        self.config = config
        self.observer.gain = float(config.observer_gain)
        if config.wrench_damping != self.wrench_estimator.damping:
            self.wrench_estimator = WrenchEstimator(self.wrench_estimator.model,
                                                    self.wrench_estimator.link,
                                                    config.wrench_damping)
            self.wrench = self.wrench_estimator.wrench
        self.thresholds = CollisionThresholds.from_config(config, len(self._joints))
        self.detector.thresholds = self.thresholds
        self._checks_wrench = self.thresholds.checks_wrench
        self._acceleration2 = config.acceleration_threshold ** 2
        self._sent.delay = float(config.command_delay)

    def set_model(self, model):
        """The same robot with another inertia (a payload): the observer restarts."""
        self.observer.model = model
        self.observer.restart()
        self.wrench_estimator.set_model(model)

    @property
    def collided(self) -> bool:
        return self.detector.collided

    @property
    def reason(self) -> str:
        return self.detector.reason

    def observe(self, now, q, qd, effort, friction) -> bool:
        """Update r, F and the flags from a state (model order); effort: the measured joint
        effort (model order) when use_measured_effort, else None. True when a collision
        latched now and the reaction is not 'none' (the caller aborts the motion)."""
        self._previous, self._now = self._now, now
        if effort is not None:
            tau = effort
        elif self._previous is None:
            tau = self._sent.latest                # the first state: only anchors p(0)
        else:
            tau = self._sent.over(self._previous, now)
        if friction is not None and friction.active:
            # the model side: the friction the model knows is not tau_ext
            tau = np.subtract(tau, friction.torque(qd), out=self._tau)
        r = self.observer.update(now, q, qd, tau)
        if self._identity:
            wrench = self.wrench_estimator.estimate(q, r)
        else:
            r.take(self._joints.index, out=self.tau_ext)
            # the wrench from the commanded joints' residual: a joint held by other means
            # (fixed positions) shows its holding torque in r, which no contact explains
            np.multiply(r, self._commanded, out=self._r_commanded)
            wrench = self.wrench_estimator.estimate(q, self._r_commanded)
        newly = self.detector.update(self.tau_ext, wrench if self._checks_wrench else None,
                                     self._accelerating)
        if newly:
            self.detected_at = now
        if newly and self.config.reaction == REFLEX:
            self._reflex_until = now + self.config.reflex_duration
        return newly and self.config.reaction != "none"

    def applied(self, tau, qdd_desired):
        """The command sent for this state (command order), its desired acceleration: the
        'accelerating' levels apply while |qdd_desired| (2-norm) > acceleration_threshold."""
        if self._identity:
            self._applied[:] = tau
        else:
            self._applied[self._joints.index] = tau
        if self._now is not None:                  # answered a state observe() saw
            self._sent.sent(self._now, self._applied)
        self._accelerating = float(np.dot(qdd_desired, qdd_desired)) > self._acceleration2

    def override(self, now):
        """The reaction that replaces the law now: FLOAT, REFLEX or None; 'reflex_over' once,
        at the first state after the reflex (the caller then holds the pose reached)."""
        if not self.detector.collided:
            return None
        reaction = self.config.reaction
        if reaction == FLOAT:
            return FLOAT
        if reaction == REFLEX and self._reflex_until is not None:
            if now < self._reflex_until:
                return REFLEX
            self._reflex_until = None
            return "reflex_over"
        return None

    def decide(self, now, q, qd, effort, friction) -> ContactDecision:
        """observe, then the reaction in force: a collision that latches now, or a reflex that
        has just run its course, holds the pose reached; FLOAT or REFLEX replaces the law."""
        latched = self.observe(now, q, qd, effort, friction)
        override = self.override(now)
        if override == "reflex_over" or (latched and self.config.reaction == HOLD):
            self._braking_until = now + BRAKE_S
            return ContactDecision(latched, True, None)
        return ContactDecision(latched, latched or self._braking(now, qd), override)

    def _braking(self, now, qd) -> bool:
        """True while the hold brakes (see BRAKED_SPEED): hold the pose measured now."""
        if self._braking_until is None:
            return False
        if now < self._braking_until and float(np.max(np.abs(qd[self._joints.index]))) \
                >= BRAKED_SPEED:
            return True
        self._braking_until = None
        return False

    def reflex_torque(self):
        """tau = g + K_R r (model order), from this state's observer update."""
        return self.observer.gravity + self.config.reflex_gain * self.observer.r

    def reset(self):
        """Clear a latched collision (ContactResetError while in contact)."""
        self.detector.reset()
        self._reflex_until = self._braking_until = None
        self.detected_at = None
