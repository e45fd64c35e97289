"""The loop's supervisor: whether the loop that feeds the controller can still be trusted.

It owns the four watchers of the loop itself, and returns decisions; the Controller applies
them (it owns the plan, the integral term and the laws):

    watchdog      no valid state for state_timeout: trip, the safe action is in force
                  (`trip`, `gap_trips`; `stale` for the callers that ask between states)
    trip state    which safe action is in force ('hold' or 'zero'), until a state is accepted
    age guard     late states soften the feedback, and hold when they keep coming
                  (age_guard.py; `late`)
    oscillation   an unstable loop softens the feedback, then holds (oscillation.py;
                  `oscillation_answer`)

`feedback_scale` is the product of the age guard's and the oscillation answer's bandwidth
scales (Kp -> s^2 Kp, Kd -> s Kd). No rclpy.
"""
from __future__ import annotations

from typing import Optional

from rbd_control.control.errors import TrajectoryError
from rbd_control.control.safety.age_guard import AgeGuard
from rbd_control.control.safety.checks import Watchdog
from rbd_control.control.safety.oscillation import OscillationDetector
from rbd_control.params.bounds import finite

__all__ = ["LoopSupervisor"]


class LoopSupervisor:
    """One per controller; `watch_joints` again for each new model."""

    def __init__(self, config):
        """config: the checked ControllerConfig (state_timeout, max_state_age,
        expected_state_period, oscillation)."""
        self.watchdog = Watchdog(config.state_timeout)
        self.age_guard = AgeGuard(config.max_state_age,
                                  expected_period=config.expected_state_period)
        self.oscillation: Optional[OscillationDetector] = None
        self.tripped: Optional[str] = None    # the safe action in force, or None
        self._oscillation_thresholds = config.oscillation

    def watch_joints(self, joint_names):
        """A new model: a fresh oscillation detector for its commanded joints."""
        self.oscillation = OscillationDetector(joint_names, self._oscillation_thresholds)

    @property
    def feedback_scale(self) -> float:
        """Bandwidth scale of the feedback: the age guard's times the oscillation answer's."""
        return self.age_guard.scale * self.oscillation.scale

    # --- the watchdog and the safe action ---------------------------------------------

    def stale(self, now: float) -> bool:
        return self.watchdog.is_stale(now)

    def trip(self, safe_action: str) -> bool:
        """States went stale, or commanded joints went missing: `safe_action` is in force from
        now on. True when that is new (the caller then aborts the motion)."""
        if self.tripped is not None:
            return False
        self.tripped = safe_action
        return True

    def gap_trips(self, now: float, have_state: bool, safe_action: str) -> bool:
        """Before a state is answered: a gap longer than state_timeout since the last valid one
        trips as if the watchdog had been asked in between (True: the motion is aborted)."""
        return (have_state and self.tripped is None and self.watchdog.is_stale(now)
                and self.trip(safe_action))

    def fed(self, now: float):
        """A state produced a valid command: fresh again, no safe action in force."""
        self.watchdog.feed(now)
        self.tripped = None

    def check_fresh(self, now: float, have_state: bool, where: str = ""):
        """A goal needs a finite now and a fresh state to start from (TrajectoryError)."""
        if not finite(now):
            raise TrajectoryError(f"now is not a finite time: {now!r}")
        if not have_state:
            raise TrajectoryError(f"no joint state received yet{where}")
        if self.watchdog.is_stale(now):
            raise TrajectoryError(
                f"joint states are stale (none for more than {self.watchdog.timeout} s)")

    # --- late states and an oscillating loop ------------------------------------------

    def late(self, age: Optional[float], now: float) -> bool:
        """True when late states have kept coming long enough to hold (age_guard.py)."""
        return age is not None and self.age_guard.observe(age, now)

    def oscillation_answer(self, now: float, command, gains, tracking: bool) -> Optional[str]:
        """The oscillation detector on one answered Command (oscillation.py): None, SOFTEN or
        HOLD (the caller holds the pose when it tracks a trajectory)."""
        s = self.feedback_scale
        return self.oscillation.observe(
            now, command.actual_qd - command.desired_qd, command.error, gains.reference_inertia,
            s * s * gains.kp, still=tracking and command.holding)
