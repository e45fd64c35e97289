"""Shadow mode's core: what the model predicts the robot's joints carry, and how far the
measured efforts are from it, before the controller commands anything.

    ShadowPrediction().torque(model, t, q, qd, friction) -> tau (model order)
    AccelerationEstimate(cutoff_hz).update(t, qd) -> qdd   a low-passed finite difference
    ModelError(window_s).add(t, joint_names, predicted, names, measured)
        .report() -> ModelErrorReport(joint_names, rms, peak, samples, span)

The prediction is the model's inverse dynamics at the measured state plus the friction at the
measured velocity, tau = H(q) qdd + C(q, qd) qd + g(q) + tau_f(qd) (Controller._shadow). A robot
reports no acceleration, so qdd is the finite difference of the measured qd, low-passed by a
first-order filter at ACCELERATION_CUTOFF_HZ: unfiltered, the difference of a 1 kHz velocity
signal amplifies its quantisation into the inertia term; left out (qdd = 0), every fast motion
would show its inertia torque as model error. The filter lags by about 1 / (2 pi cutoff)
(8 ms at 20 Hz), so during fast accelerations the inertia part of the error carries that lag.
Identification (rbd_control/identification/filtering.py) filters zero-phase instead: it has the
whole recording; a live estimate has only the past.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from rbd_control.dynamics import rnea

ACCELERATION_CUTOFF_HZ = 20.0
DEFAULT_WINDOW_S = 2.0


class AccelerationEstimate:
    """qdd from successive (t, qd): (qd_k - qd_k-1) / dt, low-passed with alpha =
    1 - exp(-2 pi f_c dt) (a first-order filter, exact for any dt, so uneven stamps are fine).
    A first sample, a step back in time or a gap longer than `max_gap` seconds restarts it at
    zero acceleration."""

    def __init__(self, cutoff_hz=ACCELERATION_CUTOFF_HZ, max_gap=0.1):
        self.cutoff_hz, self.max_gap = float(cutoff_hz), float(max_gap)
        self.reset()

    def reset(self):
        self._t = self._qd = self.qdd = None

    def update(self, t, qd) -> np.ndarray:
        qd = np.array(qd, dtype=float)
        dt = None if self._t is None else t - self._t
        if dt is None or not 0.0 < dt <= self.max_gap or self._qd.shape != qd.shape:
            self.qdd = np.zeros_like(qd)
        elif dt > 0.0:
            alpha = 1.0 - math.exp(-2.0 * math.pi * self.cutoff_hz * dt)
            self.qdd += alpha * ((qd - self._qd) / dt - self.qdd)
        self._t, self._qd = t, qd
        return self.qdd


class ShadowPrediction:
    """tau = rnea(model, q, qd, qdd) + friction.torque(qd), qdd the AccelerationEstimate of
    the measured qd (all in model order): what the joints carry if the model is right."""

    def __init__(self, cutoff_hz=ACCELERATION_CUTOFF_HZ):
        self.acceleration = AccelerationEstimate(cutoff_hz)

    def torque(self, model, t, q, qd, friction) -> np.ndarray:
        qdd = self.acceleration.update(t, qd)
        return rnea(model, q, qd, qdd) + friction.torque(qd)


@dataclass(frozen=True)
class ModelErrorReport:
    """Per joint (joint_names order), over the last window: RMS and peak |predicted -
    measured|, N m (N); `samples` states with a measured effort over `span` seconds."""

    joint_names: tuple
    rms: np.ndarray
    peak: np.ndarray
    samples: int
    span: float


class ModelError:
    """predicted - measured per joint over a sliding window of `window` seconds (by the
    states' stamps). States without a measured effort for every predicted joint are counted
    (`missing_effort`), not added."""

    def __init__(self, window=DEFAULT_WINDOW_S):
        self.window = float(window)
        self.missing_effort = 0
        self._names = self._index = None
        self._samples = deque()          # (t, error in joint_names order)

    def clear(self):
        self._samples.clear()

    def add(self, t, joint_names, predicted, names, measured) -> bool:
        """One state: `predicted` in joint_names order, `measured` in the state's `names`
        order (a JointState's effort). False when the state has no effort of some joint."""
        joint_names, names = tuple(joint_names), tuple(names)
        if (joint_names, names) != self._names:
            where = {n: i for i, n in enumerate(names)}
            self._index = (np.array([where[j] for j in joint_names])
                           if all(j in where for j in joint_names) else None)
            self._names = (joint_names, names)
            self.clear()                 # other joints: the window starts again
        if self._index is None or len(measured) != len(names):
            self.missing_effort += 1
            return False
        samples = self._samples
        if samples and t < samples[-1][0]:
            samples.clear()              # the clock restarted (a simulator reset)
        samples.append((t, np.asarray(predicted, dtype=float)
                        - np.asarray(measured, dtype=float)[self._index]))
        while t - samples[0][0] > self.window:
            samples.popleft()
        return True

    def report(self):
        """The window's ModelErrorReport, None before any sample."""
        if not self._samples:
            return None
        errors = np.array([e for _, e in self._samples])
        return ModelErrorReport(self._names[0], np.sqrt(np.mean(np.square(errors), axis=0)),
                                np.max(np.abs(errors), axis=0), len(errors),
                                self._samples[-1][0] - self._samples[0][0])
