"""Oscillation detector: tells the controller its loop is not stable, from the states alone.

A loop that has lost its margin (a state period or a delay beyond what the gains were designed
for, loop_design.py) oscillates near its phase crossover, well above the loop's bandwidth, and the
energy of its error grows. Two signs, checked on every answered state in O(joints):

  fast swings   a joint's velocity error e' = qd - qd_desired swings from above +v to below -v
                (or back) with half-periods shorter than 1 / (2 f), `cycles` full cycles in a row
                (v = oscillation.velocity keeps measurement noise out; f =
                oscillation.frequency sits above the default gains' bandwidth, so a
                well-damped response, which does not ring, never counts);
  energy growth while the desired state is still (holding), the peak of the error energy
                    E = 1/2 sum_i d_i e'_i^2 + 1/2 sum_i Kp_i e_i^2
                (d_i the gains' reference inertia) over windows of 0.2 s grows in 5 windows in
                a row, by `energy_growth` in all, while the velocity error swings (at least 4
                swings beyond +-v in that run): a stable PD loop only dissipates it (a knock
                raises it once, then it decays), a loop that is too late feeds it; an arm pushed
                steadily away from its pose (or states that drift on their own) grows it
                without swinging, and is not an oscillation. This catches
                the slow oscillation of a large delay (3 Hz at 60 ms), which swings too slowly
                for the first sign.

The answer (Controller, controller.py): each detection scales the feedback bandwidth by
`soften` (Kp -> s^2 Kp, Kd -> s Kd, like the age guard, age_guard.py); from the second
detection on the trajectory is aborted and the pose held (`reason` says why). The scale stays
until the gains or the model change (Controller.set_gains / set_model call reset). No rclpy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from rbd_control.control.errors import ConfigError
from rbd_control.control.flags import any_set
from rbd_control.params.controller import CONTROLLER_PARAMETERS

__all__ = ["OscillationThresholds", "OscillationDetector", "SOFTEN", "HOLD"]

_DEFAULT = CONTROLLER_PARAMETERS.default
SOFTEN, HOLD = "soften", "hold"
ENERGY_WINDOW = 0.2          # s
ENERGY_WINDOWS = 5           # growing windows in a row
# a swing counts as fast above this multiple of the loop's natural frequency (or above
# oscillation.frequency, whichever is higher)
ABOVE_NATURAL = 1.5
MIN_SCALE = 1e-3             # the feedback never softens below this (keeps a restoring term)
MIN_SWINGS = 4               # swings beyond +-velocity while the energy grows: it oscillates


@dataclass(frozen=True)
class OscillationThresholds:
    """The oscillation.<field> parameters (params/controller.py): their defaults and checks."""

    frequency: float = _DEFAULT("oscillation.frequency")          # Hz; 0: off
    velocity: float = _DEFAULT("oscillation.velocity")            # rad/s
    cycles: float = _DEFAULT("oscillation.cycles")
    energy_growth: float = _DEFAULT("oscillation.energy_growth")  # factor per window; 0: off
    soften: float = _DEFAULT("oscillation.soften")

    def check(self):
        reason = CONTROLLER_PARAMETERS.refusal(self, "oscillation")
        if reason:
            raise ConfigError(reason)


class OscillationDetector:
    """Watches the velocity error and the error energy of one controller's joints."""

    def __init__(self, joint_names, thresholds: Optional[OscillationThresholds] = None):
        self.thresholds = thresholds if thresholds is not None else OscillationThresholds()
        self.thresholds.check()
        self.joint_names = tuple(joint_names)
        self.detections = 0          # oscillations seen since start
        self.holds = 0               # of which answered by a hold
        self.last_time = -math.inf   # when the last one was seen
        self.reason = ""             # the last one, in words
        self.reset()

    @property
    def enabled(self) -> bool:
        return self.thresholds.frequency > 0.0

    @property
    def held(self) -> bool:
        """An oscillation went on after softening and the pose is held (until reset)."""
        return self._answered >= 2

    def reset(self):
        """Full gains again, nothing remembered (new gains or a new model)."""
        n = len(self.joint_names)
        self.scale = 1.0
        self._answered = 0           # detections answered since the last reset
        self._sign = np.zeros(n)     # last swing beyond +-v: +1, -1, 0 none yet
        self._swing_time = np.full(n, -math.inf)
        self._fast = np.zeros(n)     # fast half-cycles in a row
        self._window_start = None    # energy: the window in progress, its peak,
        self._window_peak = self._previous_peak = self._run_start = math.inf
        self._growing = 0            # windows in a row whose peak grew
        self._swings = 0             # velocity-error swings (any joint, any speed) in that run

    def observe(self, now, velocity_error, error, inertia, kp, still) -> Optional[str]:
        """One answered state (command order): SOFTEN or HOLD when it oscillates, else None.
        still: the desired state does not move (holding a pose)."""
        if not self.enabled:
            return None
        found = self._fast_swings(now, np.asarray(velocity_error, dtype=float),
                                  self._swing_frequency(inertia, kp))
        if found is None and still and self.thresholds.energy_growth > 0.0:
            found = self._energy_grows(now, velocity_error, error, inertia, kp)
        elif not still:
            self._window_start = None
        return None if found is None else self._answer(now, found)

    def _swing_frequency(self, inertia, kp):
        """Per joint, the swing frequency above which a swing is fast: oscillation.frequency,
        or above the loop's own natural frequency sqrt(Kp/d) / 2 pi where the gains in force
        are stiffer than the default design (a 30 Hz excitation loop rings well damped at
        30 Hz; an unstable loop oscillates at its phase crossover, above it)."""
        natural_hz = np.sqrt(np.asarray(kp, dtype=float) / np.asarray(inertia, dtype=float))
        return np.maximum(self.thresholds.frequency, ABOVE_NATURAL * natural_hz / (2.0 * np.pi))

    def _fast_swings(self, now, ev, frequency):
        t = self.thresholds
        swing = np.where(ev > t.velocity, 1.0, np.where(ev < -t.velocity, -1.0, 0.0))
        changed = (swing != 0.0) & (swing != self._sign)
        if not any_set(changed):
            return None
        self._swings += int(np.count_nonzero(changed & (self._sign != 0.0)))
        half_period = now - self._swing_time
        fast = changed & (self._sign != 0.0) & (half_period < 0.5 / frequency)
        self._fast = np.where(changed, np.where(fast, self._fast + 1.0, 0.0), self._fast)
        self._sign = np.where(changed, swing, self._sign)
        self._swing_time = np.where(changed, now, self._swing_time)
        worst = int(np.argmax(self._fast))
        if self._fast[worst] < 2.0 * t.cycles:
            return None
        self._fast[:] = 0.0
        return (f"{self.joint_names[worst]} oscillates: velocity error swinging beyond "
                f"+-{t.velocity:g} rad/s faster than {frequency[worst]:.3g} Hz")

    def _energy_grows(self, now, ev, error, inertia, kp):
        energy = 0.5 * float(np.dot(inertia, np.square(ev)) + np.dot(kp, np.square(error)))
        if self._window_start is None or now < self._window_start:
            self._window_start, self._window_peak, self._growing = now, energy, 0
            self._previous_peak = self._run_start = math.inf
            return None
        self._window_peak = max(self._window_peak, energy)
        if now - self._window_start < ENERGY_WINDOW:
            return None
        peak, previous = self._window_peak, self._previous_peak
        floor = 0.5 * float(np.sum(inertia)) * self.thresholds.velocity ** 2
        if peak > previous and peak > floor:
            self._growing += 1
        else:
            self._growing, self._run_start, self._swings = 0, peak, 0
        self._window_start, self._window_peak, self._previous_peak = now, energy, peak
        if (self._growing < ENERGY_WINDOWS
                or peak < self.thresholds.energy_growth * self._run_start
                or self._swings < MIN_SWINGS):   # growing without swinging: pushed, not unstable
            return None
        self._growing, self._run_start, self._swings = 0, peak, 0
        return (f"error energy grew {peak / previous:.3g}x in each of the last {ENERGY_WINDOWS} "
                f"windows of {ENERGY_WINDOW:g} s while holding")

    def _answer(self, now, reason):
        self.detections += 1
        self._answered += 1
        self.last_time = now
        self.scale = max(self.scale * self.thresholds.soften, MIN_SCALE)
        action = SOFTEN if self._answered == 1 else HOLD
        if action == HOLD:
            self.holds += 1
        self.reason = (f"{reason}; gains softened to {self.scale:.2f} of bandwidth"
                       + ("; trajectory aborted, holding" if action == HOLD else ""))
        return action
