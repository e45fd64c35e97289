"""Excitation trajectories: finite Fourier series (Swevers, Ganseman, Tukel, De Schutter & Van
Brussel 1997, "Optimal robot excitation and identification"),

    q_j(t) = q0_j + sum_{l=1..L} a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t),   w = 2 pi / T,

periodic in T, so the robot repeats the same motion and may start and stop at t = k T. The
coefficients obey sum_l a_jl = 0 and sum_l l b_jl = 0 (qd = qdd = 0 at t = k T: the robot
starts and ends at rest) and are chosen to minimise the condition number of the stacked base
regressor (friction columns included, columns scaled to unit norm so units do not count),
with every joint scaled to stay within its position, velocity and acceleration limits.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_control.dynamics import rnea_batch
from rbd_control.dynamics.errors import InputError

from rbd_control.dynamics.friction import DEFAULT_EPSILON, friction_columns
from rbd_control.dynamics.regressor import regressor_batch
from rbd_control.identification.base import base_parameters

POSITION_MARGIN = 0.1     # fraction of each joint's range kept free at both ends
UNLIMITED_RANGE = np.pi   # half-range used for continuous joints
SAMPLES_PER_PERIOD = 100  # states at which the condition number is evaluated
LIMIT_SAMPLES_PER_PERIOD = 2000   # where the limits are checked


@dataclass(frozen=True)
class FourierTrajectory:
    period: float
    q0: np.ndarray            # (nq,)
    a: np.ndarray             # (nq, L)
    b: np.ndarray             # (nq, L)
    duration: float

    @property
    def omega(self) -> float:
        return 2.0 * np.pi / self.period

    def sample(self, t):
        """q, qd, qdd at times t: arrays (len(t), nq)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        l = np.arange(1, self.a.shape[1] + 1)
        wl = self.omega * l                                   # (L,)
        s, c = np.sin(np.outer(t, wl)), np.cos(np.outer(t, wl))   # (N, L)
        q = self.q0 + s @ (self.a / wl).T - c @ (self.b / wl).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * wl).T + c @ (self.b * wl).T
        return q, qd, qdd

    def waypoints(self, dt=0.02):
        """times, q, qd, qdd every dt over the whole series: the waypoints of a trajectory
        (control.JointTrajectory.from_arrays; quintic between them matches the series)."""
        times = np.arange(0.0, self.duration + 0.5 * dt, dt)
        return (times, *self.sample(times))


def _coefficients(x, nq, harmonics):
    """a, b from the free coefficients: a_j1 and b_j1 close the rest-at-t=0 conditions."""
    free = x.reshape(2, nq, harmonics - 1)
    l = np.arange(2, harmonics + 1)
    a = np.concatenate((-free[0].sum(axis=1, keepdims=True), free[0]), axis=1)
    b = np.concatenate((-(free[1] * l).sum(axis=1, keepdims=True), free[1]), axis=1)
    return a, b


def _limits(model, velocity_fraction, max_acceleration):
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    limited = np.isfinite(lower) & np.isfinite(upper)
    lower, upper = np.where(limited, lower, -UNLIMITED_RANGE), np.where(limited, upper,
                                                                        UNLIMITED_RANGE)
    centre = 0.5 * (lower + upper)
    half = np.where(limited, 0.5 * (upper - lower) * (1 - 2 * POSITION_MARGIN), UNLIMITED_RANGE)
    velocity = np.where(np.isfinite(model.velocity_limit), model.velocity_limit, 2.0)
    acceleration = np.broadcast_to(max_acceleration, half.shape)
    return centre, half, velocity * velocity_fraction, acceleration


def _scaled(traj, times, half, vmax, amax):
    """Scale each joint's a, b so that |q - q0| <= half, |qd| <= vmax, |qdd| <= amax."""
    q, qd, qdd = traj.sample(times)
    peak = lambda x: np.maximum(np.abs(x).max(axis=0), 1e-12)  # noqa: E731
    # 0.999: the peaks between the samples are higher by up to (pi f dt)^2 / 2 ~ 1e-4
    s = 0.999 * np.minimum.reduce([half / peak(q - traj.q0), vmax / peak(qd), amax / peak(qdd)])
    return FourierTrajectory(traj.period, traj.q0, traj.a * s[:, None], traj.b * s[:, None],
                             traj.duration)


def excitation_trajectory(model, duration=60.0, *, period=10.0, harmonics=5, seed=0,
                          velocity_fraction=0.6, max_acceleration=4.0, effort_fraction=0.7,
                          iterations=300, friction=True, centre=None):
    """An optimised FourierTrajectory of `duration` s (a whole number of periods).

    velocity_fraction: of each <limit velocity> (2 rad/s where none);
    max_acceleration: rad/s^2 (scalar or per joint); effort_fraction: of each <limit effort>,
    checked with model's rnea (amplitudes shrink until it holds); centre: q0 (default the
    middle of each range). iterations: Nelder-Mead evaluations of the condition number.
    """
    if duration < period:
        raise InputError(f"duration {duration} s is shorter than one period ({period} s)")
    if harmonics < 2:
        raise InputError("harmonics must be >= 2 (one harmonic cannot start at rest)")
    duration = period * np.floor(duration / period + 1e-9)
    mid, half, vmax, amax = _limits(model, velocity_fraction, max_acceleration)
    q0 = mid if centre is None else np.asarray(centre, dtype=float)
    times = np.linspace(0.0, period, SAMPLES_PER_PERIOD, endpoint=False)
    fine = np.linspace(0.0, period, LIMIT_SAMPLES_PER_PERIOD, endpoint=False)
    columns = base_parameters(model).independent

    def build(x):
        a, b = _coefficients(x, model.nq, harmonics)
        return _scaled(FourierTrajectory(period, q0, a, b, duration), fine, half, vmax, amax)

    def cost(x):
        return np.log(_condition(model, columns, *build(x).sample(times), friction, None))

    import scipy.optimize  # ~1 s to import: not at import of the package
    rng = np.random.default_rng(seed)
    starts = [rng.normal(size=2 * model.nq * (harmonics - 1)) for _ in range(8)]
    x0 = min(starts, key=cost)
    result = scipy.optimize.minimize(cost, x0, method="Nelder-Mead",
                                     options={"maxfev": iterations, "xatol": 1e-3})
    traj = build(result.x)
    return _within_effort(model, traj, times, effort_fraction)


def _within_effort(model, traj, times, effort_fraction):
    """Shrink the motion about q0 until model's torques stay under effort_fraction * limit."""
    limit = np.where(np.isfinite(model.effort_limit), model.effort_limit, np.inf) * effort_fraction
    for _ in range(20):
        peak = np.abs(rnea_batch(model, *traj.sample(times))).max(axis=0)
        if np.all(peak <= limit):
            return traj
        traj = FourierTrajectory(traj.period, traj.q0, traj.a * 0.9, traj.b * 0.9, traj.duration)
    raise InputError(f"no excitation within {effort_fraction} of the effort limits around "
                     f"q0 = {traj.q0.tolist()} (gravity alone exceeds them?)")


def condition_number(model, Q, QD, QDD, friction=True, epsilon=None):
    """cond of the stacked base regressor (columns scaled to unit norm) over given states."""
    return _condition(model, base_parameters(model).independent, Q, QD, QDD, friction, epsilon)


def _condition(model, columns, Q, QD, QDD, friction, epsilon):
    W = regressor_batch(model, Q, QD, QDD)[:, :, columns]
    if friction:
        W = np.concatenate((W, friction_columns(QD, epsilon or DEFAULT_EPSILON)), axis=2)
    W = W.reshape(-1, W.shape[-1])
    return float(np.linalg.cond(W / np.maximum(np.linalg.norm(W, axis=0), 1e-12)))
