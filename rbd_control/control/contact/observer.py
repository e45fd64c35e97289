"""The generalized momentum observer (Haddadin, De Luca, Albu-Schaeffer, "Robot Collisions: A
Survey on Detection, Isolation, and Identification", IEEE T-RO 33(6) 2017, eq. 30; De Luca &
Mattone, ICRA 2005).

With p = H(q) qd and Hdot = C + C^T the rigid-body dynamics H qdd + C qd + g = tau + tau_ext
read  pdot = tau + C^T qd - g + tau_ext,  so the residual
    r = K_O [p - p(0) - integral of (tau + C^T qd - g + r) dt]
obeys  rdot = K_O (tau_ext - r): a first-order filter of the external torque with time
constant 1/K_O, and no qdd anywhere. tau is the joint torque that acted over the step (the
clamped command, or the measured effort) minus the model's friction estimate, so an identified
friction and payload leave a clean residual; unmodelled friction shows up in r.

Discrete form: backward Euler in r, one compiled call per state
(dynamics.momentum_observer_step, equations in dynamics/momentum.py): stable and without
overshoot at any K_O dt, the continuous filter for K_O dt << 1. This class keeps the state
(the baseline s = p(0) + integral, r, the last time) and handles gaps.
"""
from __future__ import annotations

import numpy as np

from rbd_control.dynamics import momentum_observer_step, momentum_terms

__all__ = ["MomentumObserver"]


class MomentumObserver:
    """r ~ tau_ext in model order, one update per measured state. Preallocated: an update
    allocates nothing."""

    def __init__(self, model, gain: float, max_gap: float):
        """gain: K_O in 1/s (checked by ContactConfig); max_gap: seconds between states
        beyond which the integral restarts (a stale gap), r carried over."""
        self.model = model
        self._gain = float(gain)
        self.max_gap = float(max_gap)
        n = model.nq
        self._terms = np.empty((3, n))            # p, C^T qd, g (dynamics.momentum_terms)
        self._p, self._ct_qd, self._g = self._terms
        self.r = np.zeros(n)                       # the residual, N m (N)
        self._baseline = np.zeros(n)               # s = p(0) + integral
        self._last = None                          # time of the last state

    @property
    def gain(self) -> float:
        """K_O in 1/s."""
        return self._gain

    @gain.setter
    def gain(self, gain: float):
        """A new K_O from the next state on, r unchanged: with r = K_O (p - s), keeping the
        baseline would scale r by K_new / K_old at once (a step a detector takes for a
        collision); the baseline moves instead so that p - s = r / K_new at the last state."""
        gain = float(gain)
        # s_new = p - r / K_new = s_old + r / K_old - r / K_new (r is 0 before a first state)
        self._baseline += self.r * (1.0 / self._gain - 1.0 / gain)
        self._gain = gain

    @property
    def gravity(self) -> np.ndarray:
        """g(q) of the last update (model order): the reflex reaction reuses it."""
        return self._g

    def restart(self):
        """Forget the history (a new model): the next state anchors p(0) with r = 0."""
        self._last = None
        self.r[:] = 0.0

    def update(self, t: float, q, qd, tau) -> np.ndarray:
        """r after the state (t, q, qd); tau: the torque that acted since the last state."""
        last, self._last = self._last, t
        dt = -1.0 if last is None else t - last
        if 0.0 < dt <= self.max_gap:
            return momentum_observer_step(self.model, q, qd, tau, self.gain, dt,
                                          self._baseline, self.r, self._terms)
        momentum_terms(self.model, q, qd, out=self._terms)
        p, s, r = self._p, self._baseline, self.r
        if last is None:
            s[:] = p                               # p(0): r starts at 0
            r[:] = 0.0
            return r
        # a gap or a clock jump: nothing is known about what acted meanwhile; restart the
        # integral where it keeps the current r (p - s = r / K_O)
        np.subtract(p, r / self.gain, out=s)
        return r
