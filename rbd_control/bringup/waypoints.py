"""The demo's data: the default arm's home pose, the demo trajectory and the phases' timing.
Shared by the demo, rbd_bringup --demo-trajectory and the in-the-loop tests."""
from __future__ import annotations

from typing import Sequence

import numpy as np

# A ready, unremarkable pose of the default arm: elbow bent, wrist level, away from limits.
DEFAULT_ARM_HOME = {
    "shoulder_pan": 0.0,
    "shoulder_lift": -0.8,
    "elbow": 1.4,
    "wrist_1": -0.6,
    "wrist_2": 0.5,
    "wrist_3": 0.0,
}
GRAVITY_HOLD_S = 5.0
SETTLE_AFTER_TRAJECTORY_S = 1.0
TRACKING_MODES = ("computed_torque", "feedforward_pd")


def demo_waypoints(home: dict[str, float], joints: Sequence[str]):
    """A workspace-spanning, rest-to-rest-at-the-ends trajectory that returns home.

    Via points get finite-difference velocities so the arm sweeps through them
    (quintic segments, zero acceleration at the vias); ~8 s in all.
    """
    q0 = np.array([home.get(j, 0.0) for j in joints])
    offsets = np.array(
        [
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.9, 0.35, -0.5, 0.6, -0.7, 1.0],
            [-0.6, -0.3, 0.45, -0.5, 0.6, -0.8],
            [0.4, 0.25, -0.35, 0.3, 0.4, 0.5],
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ]
    )[:, : len(joints)]
    if len(joints) > offsets.shape[1]:
        offsets = np.pad(offsets, ((0, 0), (0, len(joints) - offsets.shape[1])))
    times = np.array([0.5, 2.5, 4.5, 6.5, 8.5])
    positions = q0 + offsets
    velocities = np.zeros_like(positions)
    velocities[1:-1] = (positions[2:] - positions[:-2]) / (times[2:] - times[:-2])[:, None]
    accelerations = np.zeros_like(positions)
    return [(t, q, v, a) for t, q, v, a in zip(times, positions, velocities, accelerations)]
