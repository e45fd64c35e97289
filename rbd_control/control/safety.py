"""Safety pieces: measured-state validation, the stale-state watchdog and the effort limiter.

Nothing here knows about control laws; the controller composes them so that
  - a bad measured state is rejected with a reason (StateError) before it reaches a law;
  - when states stop arriving, a safe action (hold or zero) takes over;
  - every torque that leaves the controller is finite and within effort_limit * effort_scale.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .joint_map import JointMap
from .parameters import SAFE_ACTIONS  # defined once, with the safe_action parameter

__all__ = [
    "StateError",
    "ConfigError",
    "StateMapper",
    "Watchdog",
    "EffortLimiter",
    "SAFE_ACTIONS",
    "MAX_PLAUSIBLE_POSITION",
    "MAX_PLAUSIBLE_VELOCITY",
]

# Beyond these a reading is a sensor fault, not a robot state; rejecting it also keeps the
# dynamics (qd^2 terms) far from float overflow. Continuous joints may legitimately wind up
# many turns, hence the generous position bound.
MAX_PLAUSIBLE_POSITION = 1e4     # rad or m
MAX_PLAUSIBLE_VELOCITY = 1e3     # rad/s or m/s


class StateError(ValueError):
    """A measured joint state was rejected; the message says what is wrong with it."""


class ConfigError(ValueError):
    """A controller configuration value is invalid; the message names it."""


class StateMapper:
    """Map a measured (names, q, qd) in any order onto model order, rejecting bad input.

    Extra names (joints the model does not have, e.g. gripper fingers in /joint_states) are
    ignored unless `ignore_unknown` is False. Every model joint must be present, because the
    dynamics of the commanded joints depend on all of them. The name -> index lookup is cached
    for the last name list seen, since /joint_states repeats the same one at 1 kHz.
    """

    def __init__(self, model_joint_names: Sequence[str], ignore_unknown: bool = True):
        self.joint_names = tuple(model_joint_names)
        self._position = {name: i for i, name in enumerate(self.joint_names)}
        self.ignore_unknown = ignore_unknown
        self._cached_names: Optional[tuple] = None
        self._cached_take: Optional[np.ndarray] = None

    def map(self, names, q, qd):
        """Return (q, qd) as float arrays in model order, or raise StateError."""
        try:
            names = tuple(names)
        except TypeError:
            raise StateError(f"joint names must be a sequence of strings, got {names!r}") from None
        q = _as_vector(q, "positions")
        qd = _as_vector(qd, "velocities")
        if q.size != len(names):
            raise StateError(f"{len(names)} joint names but {q.size} positions")
        if qd.size != len(names):
            raise StateError(f"{len(names)} joint names but {qd.size} velocities")
        take = self._take_index(names)
        q_model = q[take]
        qd_model = qd[take]
        _check_finite(q_model, qd_model, self.joint_names)
        return q_model, qd_model

    def _take_index(self, names):
        if names != self._cached_names:
            self._cached_take = self._build_take(names)
            self._cached_names = names
        return self._cached_take

    def _build_take(self, names):
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise StateError(f"duplicate joint names in state: {dup}")
        unknown = [n for n in names if n not in self._position]
        if unknown and not self.ignore_unknown:
            raise StateError(f"state names joints the model does not have: {unknown}")
        try:
            return JointMap.by_name(self.joint_names, names, "the state").index
        except KeyError:
            missing = [n for n in self.joint_names if n not in set(names)]
            raise StateError(f"state is missing joints {missing}") from None


def _as_vector(values, what):
    try:
        arr = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise StateError(f"{what} are not numbers") from None
    return arr


def _check_finite(q, qd, joint_names):
    for values, what, bound in ((q, "position", MAX_PLAUSIBLE_POSITION),
                                (qd, "velocity", MAX_PLAUSIBLE_VELOCITY)):
        bad = ~(np.abs(values) <= bound)  # also catches NaN
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            value = float(values[j])
            reason = "is not finite" if not math.isfinite(value) else f"exceeds {bound:g} (sensor fault?)"
            raise StateError(f"{joint_names[j]} {what} {value!r} {reason}")


class Watchdog:
    """Tracks when the last valid state arrived; stale after `timeout` seconds without one."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.last_feed: Optional[float] = None

    def feed(self, now: float):
        self.last_feed = now

    def is_stale(self, now: float) -> bool:
        return self.last_feed is None or now - self.last_feed > self.timeout


class EffortLimiter:
    """Clamp to +-effort_limit * effort_scale; refuse anything non-finite."""

    def __init__(self, effort_limit, effort_scale: float):
        self.limit = np.asarray(effort_limit, dtype=float) * effort_scale

    def clamp(self, tau):
        """Return (clamped torque, mask of saturated joints). Raises StateError on NaN/inf."""
        if not np.all(np.isfinite(tau)):
            raise StateError("the control law produced a non-finite torque for this state")
        clamped = np.clip(tau, -self.limit, self.limit)
        return clamped, np.abs(tau) >= self.limit
