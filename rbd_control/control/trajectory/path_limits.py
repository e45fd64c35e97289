"""Does an interpolated path stay within the position limits, and not only its waypoints?

A cubic or quintic between two waypoints inside the limits can overshoot them: a 50 rad/s
waypoint velocity on a 2.2 rad joint takes the desired position to 5.8 rad. Such a trajectory
is refused (not clamped; see control/README.md, "Trajectories").

The check is exact where it can be cheap and dense where it must look closer:
1. Bernstein hull. On u = s / T in [0, 1] a degree-5 polynomial sum_k c_k T^k u^k equals
   sum_j b_j B_j(u) with b_j = sum_{k<=j} C(j,k) / C(5,k) c_k T^k (Farouki & Rajan, 1988), and
   lies between min_j b_j and max_j b_j. A segment whose hull is inside the limits is inside.
2. Only for the segments whose hull leaves the limits: the polynomial at SAMPLES points; a
   sample outside (beyond _TOLERANCE) refuses the trajectory, naming joint, time and value.
   Between samples an overshoot is at most (T / SAMPLES)^2 max|q''| / 8.
Cost: O(segments x joints), plus O(SAMPLES) per flagged pair.
"""
from __future__ import annotations

from math import comb

import numpy as np

from rbd_control.control.errors import TrajectoryError

__all__ = ["check_path_within_limits"]

SAMPLES = 64
_TOLERANCE = 1e-6   # as the waypoint check: positions may sit on a limit, up to float noise

# BERNSTEIN[j, k] = C(j, k) / C(5, k) for k <= j: power basis on [0, 1] -> Bernstein basis
BERNSTEIN = np.array([[comb(j, k) / comb(5, k) if k <= j else 0.0 for k in range(6)]
                      for j in range(6)])


def check_path_within_limits(knots, coef, limits, names):
    """knots (m+1,), coef (m, n, 6) as PiecewisePolynomial; limits (n, 2), +-inf = unbounded.

    The lower/upper bound of a segment is widened to include its start value, so a path that
    starts outside the limits (the arm sagged onto a stop) may come back but not go further."""
    if coef.shape[0] == 0:
        return
    durations = np.diff(knots)[:, None, None]                       # (m, 1, 1)
    scaled = coef * durations ** np.arange(6)                        # c_k T^k
    hull = scaled @ BERNSTEIN.T                                      # b_j, (m, n, 6)
    lower = np.minimum(limits[:, 0], coef[..., 0]) - _TOLERANCE      # (m, n)
    upper = np.maximum(limits[:, 1], coef[..., 0]) + _TOLERANCE
    flagged = np.argwhere((hull.min(axis=2) < lower) | (hull.max(axis=2) > upper))
    if flagged.size == 0:
        return
    seg, joint = flagged[:, 0], flagged[:, 1]
    u = np.linspace(0.0, 1.0, SAMPLES)
    values = scaled[seg, joint] @ (u[None, :] ** np.arange(6)[:, None])   # (f, SAMPLES)
    low, high = values < lower[seg, joint, None], values > upper[seg, joint, None]
    outside = np.flatnonzero(np.any(low | high, axis=1))
    if outside.size == 0:
        return
    f = outside[0]
    s, j = int(seg[f]), int(joint[f])
    k = int(np.argmax(np.where(low[f], lower[s, j] - values[f], values[f] - upper[s, j])))
    raise TrajectoryError(
        f"the interpolated path of {names[j]} reaches {values[f, k]:.6g} at "
        f"t={knots[s] + u[k] * (knots[s + 1] - knots[s]):.6f} s, outside its limits "
        f"[{limits[j, 0]:.6g}, {limits[j, 1]:.6g}] (between waypoints: check velocities and "
        "accelerations)")
