"""The demo's data: the default arm's home and work poses, any robot's start pose, the demo
trajectory (within a robot's limits) and the phases' timing. Shared by the demo, rbd_bringup
--demo-trajectory and --teleop, and the in-the-loop tests."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from rbd_control.control.safety.command_limits import soft_inset
from rbd_control.params.controller import CONTROLLER_PARAMETERS

# A ready, unremarkable pose of the default arm: elbow bent, wrist level, away from limits.
DEFAULT_ARM_HOME = {
    "shoulder_pan": 0.0,
    "shoulder_lift": -0.8,
    "elbow": 1.4,
    "wrist_1": -0.6,
    "wrist_2": 0.5,
    "wrist_3": 0.0,
}
# The work pose: tool0 forward of the base, well conditioned (the demo's Cartesian and contact
# phases, and both arms of the teleoperation scene: a hand moving tool0 around it moves
# every joint a little, none through a near-singular sweep)
WORK_JOINTS = {"shoulder_pan": 0.0, "shoulder_lift": -0.3, "elbow": 1.4, "wrist_1": -0.6,
               "wrist_2": 0.5, "wrist_3": 0.0}
GRAVITY_HOLD_S = 5.0
SETTLE_AFTER_TRAJECTORY_S = 1.0
TRACKING_MODES = ("computed_torque", "feedforward_pd")


# The demo's shape: each joint's offsets from home at the via points (joint k of a longer
# robot takes column k mod 6). Rest at both ends, sweeping through the vias.
DEMO_OFFSETS = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.9, 0.35, -0.5, 0.6, -0.7, 1.0],
        [-0.6, -0.3, 0.45, -0.5, 0.6, -0.8],
        [0.4, 0.25, -0.35, 0.3, 0.4, 0.5],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ]
)
DEMO_TIMES = np.array([0.5, 2.5, 4.5, 6.5, 8.5])
LIMIT_MARGIN = 0.1          # of each joint's range kept clear at both ends
SOFT_LIMIT_ROOM = 1.5       # times the default soft-limit inset kept clear, at least
_DEFAULT_SOFT_MARGIN = CONTROLLER_PARAMETERS.core_default("limits.soft_margin")
VELOCITY_FRACTION = 0.7     # of each joint's <limit velocity> the demo may reach


def start_pose(model) -> dict[str, float]:
    """Any robot's start pose: the middle of each joint's range, 0 where it has none (a
    continuous joint). Away from the limits, so a demo can move both ways."""
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    limited = np.isfinite(lower) & np.isfinite(upper)
    middle = np.where(limited, 0.5 * (np.where(limited, lower, 0) + np.where(limited, upper, 0)),
                      0.0)
    return dict(zip(model.joint_names, middle.tolist()))


def demo_waypoints(home: dict[str, float], joints: Sequence[str], model=None):
    """A rest-to-rest-at-the-ends trajectory through DEMO_OFFSETS that returns home:
    [(time from start, q, qd, qdd)], ~8 s.

    Via points get finite-difference velocities so the arm sweeps through them
    (quintic segments, zero acceleration at the vias). With `model` (a dynamics Model naming
    `joints`) each joint's offsets shrink to stay LIMIT_MARGIN inside its position limits
    (a joint outside them stays put), and time stretches until no joint exceeds
    VELOCITY_FRACTION of its velocity limit: the default arm's demo is unchanged by both.
    """
    q0 = np.array([home.get(j, 0.0) for j in joints])
    offsets = DEMO_OFFSETS[:, np.arange(len(joints)) % DEMO_OFFSETS.shape[1]]
    times = DEMO_TIMES.copy()
    if model is not None:
        index = [model.joint_names.index(j) for j in joints]
        offsets = offsets * _room_scale(q0, offsets, model.position_limits[index])
        times = _stretched(times, q0 + offsets, model.velocity_limit[index])
    return _with_velocities(times, q0 + offsets)


def _room_scale(q0, offsets, limits):
    """Per joint, the factor (at most 1) that keeps q0 + offsets inside the limits' margin:
    LIMIT_MARGIN of the range, and at least SOFT_LIMIT_ROOM times the controller's default
    soft-limit inset (its joint limits stop a joint there: a gripper's soft limits are a
    quarter of its travel inside)."""
    lower, upper = limits[:, 0], limits[:, 1]
    limited = np.isfinite(upper - lower)
    inset = SOFT_LIMIT_ROOM * soft_inset(_DEFAULT_SOFT_MARGIN, np.where(limited[:, None],
                                                                        limits, 0.0))
    margin = np.where(limited, np.maximum(LIMIT_MARGIN * (upper - lower), inset), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = (upper - margin - q0) / offsets.max(axis=0)
        down = (q0 - lower - margin) / -offsets.min(axis=0)
    scale = np.nan_to_num(np.minimum(up, down), nan=1.0, posinf=1.0)
    return np.clip(scale, 0.0, 1.0)


def _stretched(times, positions, velocity_limit):
    """`times` from the first point on, slowed until the peak speed is within the limits."""
    allowed = VELOCITY_FRACTION * np.where(np.isfinite(velocity_limit) & (velocity_limit > 0),
                                           velocity_limit, np.inf)
    peak = np.max(_peak_speeds(times, positions) / allowed)
    if not peak > 1.0:
        return times
    return times[0] + (times - times[0]) * peak


def _peak_speeds(times, positions):
    """Each joint's largest |qd| along the quintic segments (zero accelerations at the
    points): the quintic Hermite basis' derivatives, sampled."""
    waypoints = _with_velocities(times, positions)
    s = np.linspace(0.0, 1.0, 41)[:, None]
    peak = np.zeros(positions.shape[1])
    for (t0, p0, v0, _), (t1, p1, v1, _) in zip(waypoints[:-1], waypoints[1:]):
        span = t1 - t0
        qd = ((p1 - p0) * (30 * s**2 - 60 * s**3 + 30 * s**4) / span
              + v0 * (1 - 18 * s**2 + 32 * s**3 - 15 * s**4)
              + v1 * (-12 * s**2 + 28 * s**3 - 15 * s**4))
        peak = np.maximum(peak, np.abs(qd).max(axis=0))
    return peak


def _with_velocities(times, positions):
    velocities = np.zeros_like(positions)
    velocities[1:-1] = (positions[2:] - positions[:-2]) / (times[2:] - times[:-2])[:, None]
    accelerations = np.zeros_like(positions)
    return [(t, q, v, a) for t, q, v, a in zip(times, positions, velocities, accelerations)]
