"""The Controller's answers to an unsafe loop: states gone stale (the watchdog's trip and its safe
command), a state lacking commanded joints, late states and an oscillating loop (the feedback
scale of age_guard.py times oscillation.py's, and the hold when oscillation persists).

A part of the Controller class (controller.py), kept apart so that the state machine's
per-state sequence reads alone; it reads and writes the controller's fields (_tripped, _plan,
_integral, _q, _map, _limiter, age_guard, oscillation, abort_reason) and adds none.
"""
from __future__ import annotations

from typing import Optional

from rbd_control.control.config import Command
from rbd_control.control.errors import MissingJointsError
from rbd_control.control.safety.checks import safe_command
from rbd_control.control.safety.oscillation import HOLD
from rbd_control.control.trajectory.plan import TrajectoryPlan
from rbd_control.params.controller import TRACKING_MODES

__all__ = ["SafeActions"]


class SafeActions:
    @property
    def feedback_scale(self) -> float:
        """Bandwidth scale of the feedback: the age guard's times the oscillation answer's."""
        return self.age_guard.scale * self.oscillation.scale

    def _watch_oscillation(self, now, command, q_m):
        """Soften the gains when the loop oscillates, and hold if it goes on
        (safety/oscillation.py)."""
        tracking = self.mode in TRACKING_MODES
        s = self.feedback_scale
        action = self.oscillation.observe(
            now, command.actual_qd - command.desired_qd, command.error,
            self.gains.reference_inertia, s * s * self.gains.kp, still=tracking and command.holding)
        if action is None:
            return
        self.warnings.warn("oscillation", self.oscillation.reason)
        if action == HOLD and tracking:
            self.abort_reason = self.oscillation.reason
            self._hold_measured(now, q_m)

    def check_watchdog(self, now: float) -> Optional[Command]:
        """None while states are fresh; otherwise the safe command (and the trajectory is
        aborted). 'hold' commands the gravity torque of the last measured pose (no feedback:
        there is no fresh state to feed back); 'zero' commands zero effort."""
        if not self._watchdog.is_stale(now):
            return None
        if self._tripped is None:
            self._trip()
        return safe_command(self._tripped, self.model, self._q, self._map, self._limiter)

    def _trip(self):
        """States went stale: abort the trajectory and reset the integral."""
        self._tripped = self.config.safe_action
        self._integral.reset()
        if self._q is not None and self._tripped == "hold":
            self._plan.hold(self._map.take(self._q))
        else:
            self._plan = TrajectoryPlan(len(self._joint_names))

    def _safe_for_missing(self, exc: MissingJointsError) -> Command:
        """A state lacks commanded joints (e.g. a robot whose joint was renamed): take the
        configured safe action now, at the best-known pose: the measured joints from this
        state, the missing ones from the last valid state (or fixed_positions / zero)."""
        q, qd = exc.q, exc.qd
        if self._q is not None:
            q[exc.missing] = self._q[exc.missing]
        self._q, self._qd = q, qd
        if self._tripped is None:
            self._trip()
        self.warnings.warn("missing_joints", f"{exc}; {self._tripped} until they return")
        command = safe_command(self._tripped, self.model, q, self._map, self._limiter)
        command.reason = str(exc)
        return command
