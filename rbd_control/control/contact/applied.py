"""The torque that acted on the joints between two states, as the momentum observer needs it
(observer.py: tau in pdot = tau + C^T qd - g + tau_ext).

The controller knows the commands it sent and the state each answered; a plant applies each one
`delay` seconds after that state's time (contact.command_delay) until the next one takes over.
Over a step (a, b] the torque is then the time-weighted mean of the commands in force:

    tau(a, b) = sum_j w_j tau_j / sum_j w_j,   w_j = |[t_j + delay, t_{j+1} + delay) n (a, b]|

With delay 0 that is the command sent for the state at a (lock step: it acts from that state to
the next). Taking it while the plant still applied the one before leaves the change of the
command in the residual: r follows tau_applied - tau_assumed ~ -delay x dtau/dt through the
observer's filter (De Luca & Mattone, ICRA 2005: the residual is the filtered mismatch of the
torque balance, whatever its cause).

Preallocated: the commands of the last HISTORY states, newest last, shifted in place.
"""
from __future__ import annotations

import numpy as np

__all__ = ["AppliedTorque", "HISTORY"]

HISTORY = 64   # commands kept: contact.command_delay's 50 ms at 1 kHz, with room


class AppliedTorque:
    """The commands sent (model order) with their states' times, and the torque in force."""

    def __init__(self, n: int, delay: float = 0.0):
        self.delay = float(delay)
        self._times = np.full(HISTORY, -np.inf)      # the answered states' times
        self._commands = np.zeros((HISTORY, n))
        self._starts, self._ends = np.empty(HISTORY), np.empty(HISTORY)
        self._weights = np.empty(HISTORY)
        self._torque = np.zeros(n)
        self.latest = self._commands[-1]              # the newest command (a view)

    def reset(self):
        self._times[:] = -np.inf
        self._commands[:] = 0.0

    def sent(self, t: float, tau):
        """The command (model order) sent for the state at control time t."""
        self._times[:-1] = self._times[1:]
        self._commands[:-1] = self._commands[1:]
        self._times[-1] = t
        self._commands[-1] = tau

    def over(self, a: float, b: float) -> np.ndarray:
        """The mean torque in force over (a, b] (a view, valid until the next call)."""
        if self.delay == 0.0:
            return self._command_at(a)
        starts, ends, weights = self._starts, self._ends, self._weights
        np.add(self._times, self.delay, out=starts)
        # the oldest command kept was in force before it too (the plant's earlier command)
        starts[min(int(np.searchsorted(self._times, -np.inf, side="right")), HISTORY - 1)] = \
            -np.inf
        ends[:-1] = starts[1:]
        ends[-1] = np.inf
        np.minimum(ends, b, out=ends)
        np.maximum(starts, a, out=starts)
        np.subtract(ends, starts, out=weights)
        np.maximum(weights, 0.0, out=weights)
        total = weights.sum()
        if not total > 0.0:          # an empty step (b <= a): nothing acted over it
            return self._command_at(a)
        np.dot(weights, self._commands, out=self._torque)
        self._torque /= total
        return self._torque

    def _command_at(self, a: float) -> np.ndarray:
        """The newest command sent for a state at or before a (the oldest kept if none)."""
        times = self._times
        if times[-1] <= a:
            return self.latest
        first = int(np.searchsorted(times, -np.inf, side="right"))   # the slots still unused
        index = int(np.searchsorted(times, a, side="right")) - 1
        return self._commands[min(max(index, first), HISTORY - 1)]
