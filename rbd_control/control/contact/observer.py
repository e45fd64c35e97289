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

Discrete form, one state every dt, backward Euler in r: with the baseline s = p(0) + integral
and r_k = K_O (p_k - s_k) inside the integral,
    s_k = s_{k-1} + (tau + C^T qd - g + r_k) dt
        = (s_{k-1} + (tau + C^T qd - g) dt + K_O dt p_k) / (1 + K_O dt)
so a constant tau_ext is approached as r_k - tau_ext = (r_{k-1} - tau_ext) / (1 + K_O dt):
stable and without overshoot at any K_O dt (explicit Euler diverges beyond K_O dt = 2, which
a 100 Hz state stream would reach at K_O = 200), and the continuous filter for K_O dt << 1.
"""
from __future__ import annotations

import numpy as np

from rbd_control.dynamics import momentum_terms

__all__ = ["MomentumObserver"]


class MomentumObserver:
    """r ~ tau_ext in model order, one update per measured state. Preallocated: an update
    allocates nothing."""

    def __init__(self, model, gain: float, max_gap: float):
        """gain: K_O in 1/s (checked by ContactConfig); max_gap: seconds between states
        beyond which the integral restarts (a stale gap), r carried over."""
        self.model = model
        self.gain = float(gain)
        self.max_gap = float(max_gap)
        n = model.nq
        self._terms = np.empty((3, n))            # p, C^T qd, g (dynamics.momentum_terms)
        self._p, self._ct_qd, self._g = self._terms
        self.r = np.zeros(n)                       # the residual, N m (N)
        self._baseline = np.zeros(n)               # s = p(0) + integral
        self._rate = np.empty(n)                   # scratch
        self._last = None                          # time of the last state

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
        momentum_terms(self.model, q, qd, out=self._terms)
        last, self._last = self._last, t
        p, s, r = self._p, self._baseline, self.r
        if last is None:
            s[:] = p                               # p(0): r starts at 0
            r[:] = 0.0
            return r
        dt = t - last
        if not 0.0 < dt <= self.max_gap:
            # a gap or a clock jump: nothing is known about what acted meanwhile; restart the
            # integral where it keeps the current r (p - s = r / K_O)
            np.subtract(p, r / self.gain, out=s)
            return r
        # s = (s + (tau + C^T qd - g) dt + K_O dt p) / (1 + K_O dt)
        rate, k_dt = self._rate, self.gain * dt
        np.add(tau, self._ct_qd, out=rate)
        rate -= self._g
        rate *= dt
        s += rate
        np.multiply(p, k_dt, out=rate)
        s += rate
        s /= 1.0 + k_dt
        # r = K_O (p - s)
        np.subtract(p, s, out=r)
        r *= self.gain
        return r
