"""Zero-phase filtering and differentiation of recorded joint signals.

Choice: a Butterworth low-pass run forward and backward (scipy.signal.filtfilt: zero phase,
squared magnitude, order 2 x ORDER), applied alike to q, qd (when recorded) and tau -- the
"parallel filtering" of Gautier (1997), so measured and predicted torques carry the same filter
-- then central differences (numpy.gradient, second order) for qd and qdd. The cut-off should be
several times the highest frequency the motion contains; the default suits the excitation
trajectories (harmonics up to ~1 Hz) and keeps 1e-4 rad encoder steps from reaching qdd.

Recordings with gaps (several runs in one file, dropped messages) are split where the sampling
interval jumps, and each piece is filtered alone; pieces too short to filter are dropped. A
piece sampled unevenly (a loop in real time publishes when it can: rbd_mujoco_sim's states
came 1 or 2 ms apart, about half each) is first interpolated linearly onto an even grid at its
median step, since the filter assumes even sampling: filtered as if even, that recording gave
a model that tracked the demo's validation trajectory 23x worse than the exact one.
"""
from __future__ import annotations

import numpy as np

from rbd_control.dynamics.errors import InputError

DEFAULT_CUTOFF_HZ = 10.0
ORDER = 4
GAP_FACTOR = 5.0          # a step longer than this many median steps starts a new piece


def segments(t) -> list:
    """Slices of contiguous sampling in t (strictly increasing)."""
    dt = np.diff(t)
    if np.any(dt <= 0):
        raise InputError("t must be strictly increasing (sort the samples, drop duplicates)")
    breaks = np.flatnonzero(dt > GAP_FACTOR * np.median(dt)) + 1
    edges = np.concatenate(([0], breaks, [len(t)]))
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def lowpass(x, dt, cutoff_hz):
    """filtfilt Butterworth along axis 0."""
    import scipy.signal  # ~1 s to import: not at import of the package
    nyquist = 0.5 / dt
    if not 0 < cutoff_hz < nyquist:
        raise InputError(f"cutoff {cutoff_hz} Hz must lie in (0, {nyquist:.4g}) Hz (Nyquist "
                         f"of the {1 / dt:.4g} Hz sampling)")
    b, a = scipy.signal.butter(ORDER, cutoff_hz / nyquist)
    # odd extension over a few time constants, not scipy's 15 samples: smaller edge errors
    padlen = min(x.shape[0] - 1, int(round(3.0 / (cutoff_hz * dt))))
    return scipy.signal.filtfilt(b, a, x, axis=0, padlen=padlen)


def min_samples(cutoff_hz, dt):
    """Shortest piece worth filtering: three edge transients of the filter."""
    return max(int(3.0 / (cutoff_hz * dt)), 3 * (2 * ORDER + 1) + 1)


def evenly_sampled(t, dt, *signals):
    """(t, signals) as given when t steps evenly by dt (to 1e-6 dt), else on the grid
    t[0] + k dt, each column interpolated linearly (None stays None)."""
    if np.all(np.abs(np.diff(t) - dt) <= 1e-6 * dt):
        return t, signals
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    return grid, tuple(None if x is None else np.column_stack(
        [np.interp(grid, t, column) for column in np.asarray(x, dtype=float).T])
        for x in signals)


def filtered_states(t, q, tau, qd=None, cutoff_hz=DEFAULT_CUTOFF_HZ, trim_s=None):
    """(t, q, qd, qdd, tau) filtered and differentiated piece by piece, with trim_s (default
    3 / cutoff) cut from both ends of each piece where filtfilt's edge transient lives."""
    t = np.asarray(t, dtype=float)
    trim_s = 3.0 / cutoff_hz if trim_s is None else trim_s
    out = [[] for _ in range(5)]
    for piece in segments(t):
        tp = t[piece]
        dt = float(np.median(np.diff(tp))) if tp.size > 1 else np.inf
        if tp.size < min_samples(cutoff_hz, dt):
            continue
        tp, (q_p, qd_p, tau_p) = evenly_sampled(tp, dt, q[piece],
                                                None if qd is None else qd[piece], tau[piece])
        q_f = lowpass(q_p, dt, cutoff_hz)
        qd_f = np.gradient(q_f, tp, axis=0) if qd is None else lowpass(qd_p, dt, cutoff_hz)
        qdd_f = np.gradient(qd_f, tp, axis=0)
        tau_f = lowpass(tau_p, dt, cutoff_hz)
        keep = (tp >= tp[0] + trim_s) & (tp <= tp[-1] - trim_s)
        for store, value in zip(out, (tp, q_f, qd_f, qdd_f, tau_f)):
            store.append(value[keep])
    if not out[0] or sum(x.size for x in out[0]) == 0:
        raise InputError(f"no stretch of the recording is long enough to filter at {cutoff_hz} Hz")
    return tuple(np.concatenate(x) for x in out)
