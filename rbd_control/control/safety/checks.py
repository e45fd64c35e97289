"""Safety pieces: measured-state validation, the stale-state watchdog, the effort limiter and
the command of a safe action.

Nothing here knows about control laws; the controller composes them so that
  - a bad measured state is rejected with a reason (StateError) before it reaches a law;
  - when states stop arriving, a safe action (hold or zero) takes over;
  - every torque that leaves the controller is finite and within effort_limit * effort_scale.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence

import numpy as np

from rbd_control.dynamics import gravity

from rbd_control.control.config import Command
from rbd_control.control.errors import MissingJointsError, StateError, brief, duplicates
from rbd_control.control.flags import all_set
from rbd_control.params.bounds import MAX_PLAUSIBLE_POSITION, MAX_PLAUSIBLE_VELOCITY

__all__ = ["StateMapper", "Watchdog", "EffortLimiter", "safe_command"]


class StateMapper:
    """Map a measured (names, q, qd) in any order onto model order, rejecting bad input.

    Extra names (joints the model does not have, e.g. gripper fingers in /joint_states) are
    ignored unless `ignore_unknown` is False. The dynamics of the commanded joints depend on
    every model joint: a model joint that is not commanded and not in the state takes its
    value from `fill` (fixed_positions, else the URDF zero) with zero velocity, reported once
    through `warnings`. A state lacking a *commanded* joint raises MissingJointsError.
    The name -> index lookup is O(n) per new name list and cached for the last one seen, since
    /joint_states repeats the same list at 1 kHz.
    """

    def __init__(self, model_joint_names: Sequence[str], ignore_unknown: bool = True,
                 commanded=None, fill=None, warnings=None):
        self.joint_names = tuple(model_joint_names)
        n = len(self.joint_names)
        self._position = {name: i for i, name in enumerate(self.joint_names)}
        self.ignore_unknown = ignore_unknown
        self._commanded = np.ones(n, bool)
        if commanded is not None:
            self._commanded[:] = False
            self._commanded[np.asarray(commanded, dtype=int)] = True
        self._fill = np.zeros(n) if fill is None else np.asarray(fill, dtype=float)
        self._warnings = warnings
        self._cached_names: Optional[tuple] = None
        self._cached_take: Optional[_Gather] = None

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
        take = self._take_for(names)
        # the scratch holds the state and, at index len(names), a 0 that missing joints read
        scratch = take.scratch
        scratch[:-1] = q
        q_model = scratch[take.index]
        scratch[:-1] = qd
        qd_model = scratch[take.index]
        if take.missing.size:
            q_model[take.missing] = self._fill[take.missing]
        _check_finite(q_model, qd_model, self.joint_names)
        if take.lacking.size:
            raise MissingJointsError(
                f"state is missing joints {brief(self.joint_names[i] for i in take.lacking)}",
                q_model, qd_model, take.lacking)
        return q_model, qd_model

    def map_effort(self, names, effort):
        """Measured joint efforts in `names` order -> model order (StateError if absent or
        bad; the fill joints get the fill values, which no caller reads as an effort)."""
        if effort is None or len(effort) == 0:
            raise StateError("contact.use_measured_effort: the joint state has no efforts "
                             "(its effort field is empty)")
        try:
            return self.map(names, effort, effort)[0]
        except StateError as exc:
            raise StateError(f"efforts: {exc}") from None

    def _take_for(self, names):
        """The gather of the last names tuple seen, rebuilt when the names differ."""
        if names != self._cached_names:
            self._cached_take = self._build_take(names)
            self._cached_names = names
        return self._cached_take

    def _build_take(self, names):
        where = {name: i for i, name in enumerate(names)}
        if len(where) != len(names):
            raise StateError(f"duplicate joint names in state: {brief(duplicates(names))}")
        if not self.ignore_unknown:
            unknown = [n for n in names if n not in self._position]
            if unknown:
                raise StateError(f"state names joints the model does not have: {brief(unknown)}")
        take = np.array([where.get(n, len(names)) for n in self.joint_names], dtype=int)
        missing = np.flatnonzero(take == len(names))
        if self._warnings is not None:
            for i in missing[~self._commanded[missing]]:
                self._warnings.once(f"filled:{self.joint_names[i]}",
                                    f"joint states lack {self.joint_names[i]} (not commanded); "
                                    f"using {self._fill[i]:g} rad or m for it, velocity 0")
        return _Gather(take, missing, missing[self._commanded[missing]], np.zeros(len(names) + 1))


class _Gather(NamedTuple):
    """How one names tuple maps onto model order (StateMapper's cache)."""

    index: np.ndarray      # model joint i reads state entry index[i]; len(names): missing
    missing: np.ndarray    # model joints the state lacks
    lacking: np.ndarray    # of those, the commanded ones (the state is then refused)
    scratch: np.ndarray    # len(names) + 1 floats, the last one always 0


def _as_vector(values, what):
    try:
        arr = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise StateError(f"{what} are not numbers") from None
    return arr


def _check_finite(q, qd, joint_names):
    # one comparison per vector in the common case; NaN fails <= as well
    if (all_set(np.abs(q) <= MAX_PLAUSIBLE_POSITION)
            and all_set(np.abs(qd) <= MAX_PLAUSIBLE_VELOCITY)):
        return
    for values, what, bound in ((q, "position", MAX_PLAUSIBLE_POSITION),
                                (qd, "velocity", MAX_PLAUSIBLE_VELOCITY)):
        bad = ~(np.abs(values) <= bound)  # also catches NaN
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            value = float(values[j])
            reason = ("is not finite" if not math.isfinite(value)
                      else f"exceeds {bound:g} (sensor fault?)")
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
        self._lower = -self.limit

    def clamp(self, tau):
        """Return (clamped torque, mask of saturated joints). Raises StateError on NaN/inf."""
        if not all_set(np.isfinite(tau)):
            raise StateError("the control law produced a non-finite torque for this state")
        # np.clip(tau, -limit, limit) without its Python wrapper
        clamped = np.maximum(tau, self._lower)
        np.minimum(clamped, self.limit, out=clamped)
        return clamped, np.abs(tau) >= self.limit


def safe_command(action: str, model, q, joint_map, limiter: EffortLimiter) -> Command:
    """The command of safe action `action` at the model-order pose q (None: none known yet).
    'hold' commands the gravity torque of q and no feedback (there is no fresh state to feed
    back); 'zero' commands zero effort."""
    names = joint_map.names
    if action == "hold" and q is not None:
        ff = joint_map.take(gravity(model, q))
        tau, saturated = limiter.clamp(ff)
        return Command.at_rest("safe_hold", names, joint_map.take(q).copy(), tau, ff, saturated)
    n = len(names)
    q_hold = joint_map.take(q).copy() if q is not None else np.zeros(n)
    return Command.at_rest("safe_zero", names, q_hold, np.zeros(n), np.zeros(n), np.zeros(n, bool))
