"""Poses for the Cartesian controller: unit quaternions (x, y, z, w, as geometry_msgs), the pose
error, and a pose target interpolated over time. numpy only; no rclpy.

Orientation error (world axes), from the error rotation R_e = R_d R^T as a quaternion
q_e = q_d q^* = (v_e, w_e):
    e_o = 2 sign(w_e) v_e  = 2 sin(theta/2) axis  ~ theta axis for small errors
the quaternion error of Yuan 1988 and of franka_example_controllers' cartesian impedance
example; sign(w_e) picks the short way round, so q and -q give the same error.

Interpolation: position along the straight line, orientation by slerp, both with the
minimum-jerk profile s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 (Flash & Hogan 1985), which starts
and ends at rest. The duration is the longest of MIN_DURATION and the times at which the peak
speed (1.875 times the mean for this profile) reaches MAX_LINEAR_SPEED or MAX_ANGULAR_SPEED.

A streamed target (5-50 Hz) would rest at every sample that way; PoseFilter follows it
instead through a first-order filter of time constant T, per state
    p_f <- p_f + a (p_target - p_f),  q_f <- slerp(q_f, q_target, a),  a = 1 - exp(-dt / T)
continuous, without overshoot, and without rests between targets.
"""
from __future__ import annotations

import math

import numpy as np

MAX_LINEAR_SPEED = 0.25     # m/s, peak along the interpolated path
MAX_ANGULAR_SPEED = 1.0     # rad/s, peak
MIN_DURATION = 0.5          # s
PEAK_OVER_MEAN = 1.875      # max ds/dtau of the minimum-jerk profile


def quat_from_matrix(R) -> np.ndarray:
    """(x, y, z, w) of a rotation matrix, w >= 0 (Shepperd's method: divide by the largest)."""
    R = np.asarray(R, dtype=float).tolist()   # Python floats: ~3x faster than numpy scalars
    t = R[0][0] + R[1][1] + R[2][2]
    candidates = (t, R[0][0], R[1][1], R[2][2])
    k = candidates.index(max(candidates))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = ((R[2][1] - R[1][2]) / s, (R[0][2] - R[2][0]) / s, (R[1][0] - R[0][1]) / s, 0.25 * s)
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * math.sqrt(max(1.0 + 2.0 * R[i][i] - t, 0.0))
        q = [0.0, 0.0, 0.0, (R[m][j] - R[j][m]) / s]
        q[i], q[j], q[m] = 0.25 * s, (R[j][i] + R[i][j]) / s, (R[m][i] + R[i][m]) / s
    q = np.array(q)
    return q if q[3] >= 0.0 else -q


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product a b, both (x, y, z, w): [w_a v_b + w_b v_a + v_a x v_b; w_a w_b - v_a.v_b]
    (on Python floats: numpy's cross and append cost ~10 µs on 3-vectors)."""
    ax, ay, az, aw = np.asarray(a, dtype=float).tolist()
    bx, by, bz, bw = np.asarray(b, dtype=float).tolist()
    return np.array([aw * bx + bw * ax + ay * bz - az * by,
                     aw * by + bw * ay + az * bx - ax * bz,
                     aw * bz + bw * az + ax * by - ay * bx,
                     aw * bw - ax * bx - ay * by - az * bz])


def quat_conjugate(q) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def orientation_error(q_desired, q) -> np.ndarray:
    """e_o = 2 sign(w_e) v_e of q_e = q_d q^*, world axes."""
    q_e = quat_multiply(q_desired, quat_conjugate(q))
    return (2.0 if q_e[3] >= 0.0 else -2.0) * q_e[:3]


def slerp(q0, q1, s) -> np.ndarray:
    """Spherical linear interpolation from q0 (s = 0) to q1 (s = 1), the short way."""
    c = float(q0 @ q1)
    if c < 0.0:
        q1, c = -q1, -c
    if c > 1.0 - 1e-12:
        q = q0 + s * (q1 - q0)
    else:
        theta = math.acos(c)
        q = (math.sin((1.0 - s) * theta) * q0 + math.sin(s * theta) * q1) / math.sin(theta)
    return q / np.linalg.norm(q)


def unit_quaternion(value, what="quaternion_xyzw") -> np.ndarray:
    """4 finite numbers of norm within 1 +- 0.01, normalised; ValueError naming `what`."""
    q = np.asarray(value, dtype=float).reshape(-1)
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        raise ValueError(f"{what} must be 4 finite numbers (x, y, z, w), got {value!r}")
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > 0.01:
        raise ValueError(f"{what} must be a unit quaternion, its norm is {norm:.4g}")
    return q / norm


def minimum_jerk(tau: float) -> float:
    """s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 on [0, 1], clamped outside."""
    tau = min(max(tau, 0.0), 1.0)
    return tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau))


class PoseInterpolation:
    """A pose moving from (p0, q0) at t0 to (p1, q1) at t0 + duration, at rest at both ends."""

    def __init__(self, p0, q0, p1, q1, t0: float):
        self.p0, self.q0 = np.array(p0, dtype=float), np.array(q0, dtype=float)
        self.p1, self.q1 = np.array(p1, dtype=float), np.array(q1, dtype=float)
        self.t0 = float(t0)
        distance = float(np.linalg.norm(self.p1 - self.p0))
        angle = 2.0 * math.acos(min(abs(float(self.q0 @ self.q1)), 1.0))
        self.duration = max(MIN_DURATION, PEAK_OVER_MEAN * distance / MAX_LINEAR_SPEED,
                            PEAK_OVER_MEAN * angle / MAX_ANGULAR_SPEED)

    @classmethod
    def hold(cls, p, q, t0: float) -> "PoseInterpolation":
        return cls(p, q, p, q, t0)

    @property
    def end_time(self) -> float:
        return self.t0 + self.duration

    def sample(self, now: float):
        """(position, quaternion) at time `now`."""
        s = minimum_jerk((now - self.t0) / self.duration)
        return self.p0 + s * (self.p1 - self.p0), slerp(self.q0, self.q1, s)


class PoseFilter:
    """A pose following the newest target through a first-order filter (module doc); the
    interface of PoseInterpolation (sample, end_time). Time must not run backwards: an older
    `now` leaves the filtered pose as it is."""

    def __init__(self, p, q, t0: float, time_constant: float):
        self.p, self.q = np.array(p, dtype=float), np.array(q, dtype=float)
        self.p1, self.q1 = self.p.copy(), self.q.copy()
        self.t = self.t1 = float(t0)
        self.T = float(time_constant)

    def retarget(self, p1, q1, now: float):
        """Follow (p1, q1) from the pose filtered until now."""
        self.sample(now)
        self.p1, self.q1 = np.array(p1, dtype=float), np.array(q1, dtype=float)
        self.t1 = float(now)

    @property
    def end_time(self) -> float:
        """Five time constants after the newest target: within 0.7 % of it."""
        return self.t1 + 5.0 * self.T

    def sample(self, now: float):
        """(position, quaternion) at time `now`."""
        dt = now - self.t
        if dt > 0.0:
            a = -math.expm1(-dt / self.T)
            self.p = self.p + a * (self.p1 - self.p)
            self.q = slerp(self.q, self.q1, a)
            self.t = now
        return self.p, self.q
