"""State-age guard: soften the feedback while the states being answered are old.

A feedback loop of bandwidth w (rad/s) loses the phase w * tau to a loop delay tau; a PD loop
of phase margin PM turns unstable once w_c * tau > PM (w_c its crossover). The default gains
are designed in discrete time for states every expected_state_period (4 ms) answered
expected_delay (10 ms) late, with 45 deg of phase margin and a gain margin of 2 (loop_design.py);
at 1 kHz they lose stability near 28 ms (bench/delay_margin.py). A state older than the
design's delay eats into that margin.

The age of a state is `now - stamp` at the moment the controller answers it, plus half of
what the measured state period (the time between states answered, averaged over ~20 states)
exceeds expected_state_period by: states that come slower than the gains were designed for
add the zero-order hold's lag T / 2 (loop_design.py), so 50 Hz states answered at once soften
the gains of a 250 Hz design like states 8 ms late. Two responses,
in order of severity (the controller applies them, controller.py):
  1. softened: the first state older than `max_state_age` *engages* the guard. The trajectory
     goes on; the model term (feedforward, gravity, the inverse dynamics of the plan) stays
     whole and the feedback is softened: the bandwidth is scaled by
        s = max_state_age / worst_age       (worst_age: the largest age since engaging)
     i.e. Kp -> s^2 Kp, Kd -> s Kd (and the acceleration gains of computed_torque, the damping
     of gravity_compensation likewise), so w * age stays at the w * max_state_age the gains
     were chosen for; the integral term is reset and frozen.
  2. overloaded: late states keep coming for `overload_time` (default 0.2 s: from the first
     late state of the episode to the newest one). Then the controller aborts the trajectory
     and holds the pose measured at that moment (as the watchdog's hold does: a trajectory
     cannot be tracked on states that stay late), still with softened gains.
A single hiccup (a garbage-collection pause, a scheduler delay, the burst of a discovery
handshake) lasts milliseconds: it softens the gains for `recovery_time` and a MoveIt goal goes
on. 0.2 s is 200 states at 1 kHz, a hundred times the node's p99 latency (about 1.5 ms,
bench/latency.py), yet short against the seconds a trajectory takes: on a host that stays
overloaded the arm stops following its goal within 0.2 s.
Softened gains rather than gravity plus damping: damping alone has no restoring stiffness, so
a knocked arm floats away from its pose and stays there; softened gains bring it back. With
the knock of bench/delay_margin.py and 20 ms of delay, gravity plus damping (sized for a
phase lag of pi/8 to pi/4 at that delay) let the arm wander 0.18 to 1.3 rad; softened gains
0.14 rad, back to within 2e-3 rad after 3 s.
The guard disengages, and the full gains return, once ages have stayed at or below
max_state_age for `recovery_time` seconds; that ends the episode. max_state_age = 0 disables
the guard. Its default (the parameter table, params/controller.py) is 10 ms, expected_delay's
default: up to that age the default gains keep their stated margins, beyond it s restores the
phase w * age the gains were designed for.
"""
from __future__ import annotations

import math

__all__ = ["AgeGuard", "DEFAULT_OVERLOAD_TIME", "DEFAULT_RECOVERY_TIME"]

DEFAULT_RECOVERY_TIME = 0.5
DEFAULT_OVERLOAD_TIME = 0.2
PERIOD_SMOOTHING = 0.05     # exponential average of the state period over ~20 states
PERIOD_RESOLUTION = 1e-6    # s: a period this close to the expected one is the expected one


class AgeGuard:
    """Tracks state ages; engaged while they exceed max_state_age, overloaded once late states
    have kept coming for overload_time (see the module doc)."""

    def __init__(self, max_state_age: float, recovery_time: float = DEFAULT_RECOVERY_TIME,
                 overload_time: float = DEFAULT_OVERLOAD_TIME, expected_period: float = math.inf):
        self.max_state_age = float(max_state_age)
        self.expected_period = float(expected_period)   # inf: the state period is not judged
        self._previous = None        # when the last state was answered
        self.period = None           # the measured state period (smoothed), s
        self.recovery_time = float(recovery_time)
        self.overload_time = float(overload_time)
        self.engaged = False
        self.overloaded = False      # this episode has lasted for overload_time
        self.events = 0              # times the guard engaged
        self.overloads = 0           # episodes that turned into an overload
        self.engaged_states = 0      # states answered with softened feedback
        self.worst_age = 0.0         # largest age in the current (or last) episode
        self._late_since = None      # time of the first late state of the episode
        self._fresh_since = None     # time of the first fresh state while engaged

    @property
    def enabled(self) -> bool:
        return self.max_state_age > 0.0

    @property
    def scale(self) -> float:
        """Feedback bandwidth scale s in (0, 1]: 1 unless engaged."""
        if not self.engaged:
            return 1.0
        return min(1.0, self.max_state_age / self.worst_age)

    def observe(self, age: float, now: float) -> bool:
        """Account for one state of this age answered at `now`; True if the episode turned
        into an overload just now (the caller then aborts its trajectory and holds)."""
        if not self.enabled or not math.isfinite(age):
            return False
        age = age + self._period_lag(now)
        if age > self.max_state_age:
            return self._late(age, now)
        if self.engaged:
            self._fresh(now)
        if self.engaged:
            self.engaged_states += 1
        return False

    def _period_lag(self, now: float) -> float:
        """Half of what the measured state period exceeds the expected one by: the extra lag of
        the zero-order hold (T / 2) the gains were not designed for (loop_design.py). The period is
        an average over ~1 / PERIOD_SMOOTHING states, so one gap (a hiccup the watchdog
        judges) does not count as a slow loop."""
        previous, self._previous = self._previous, now
        if not math.isfinite(self.expected_period):
            return 0.0
        if self.period is None:
            self.period = self.expected_period
        if previous is not None and now > previous:
            self.period += PERIOD_SMOOTHING * ((now - previous) - self.period)
        excess = self.period - self.expected_period
        return 0.5 * excess if excess > PERIOD_RESOLUTION else 0.0

    def _late(self, age: float, now: float) -> bool:
        self._fresh_since = None
        self.engaged_states += 1
        if not self.engaged:
            self.engaged, self.overloaded, self.worst_age = True, False, age
            self._late_since = now
            self.events += 1
            return False
        self.worst_age = max(self.worst_age, age)
        if now < self._late_since:                  # a clock jumped back
            self._late_since = now
        if self.overloaded or now - self._late_since < self.overload_time:
            return False
        self.overloaded = True
        self.overloads += 1
        return True

    def _fresh(self, now: float) -> None:
        if self._fresh_since is None or now < self._fresh_since:   # (a clock jumped back)
            self._fresh_since = now
        if now - self._fresh_since >= self.recovery_time:
            self.engaged = self.overloaded = False
            self._fresh_since = self._late_since = None
