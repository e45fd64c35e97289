"""A hand on a link of the simulated robot: what moves a weightless leader arm in a
teleoperation run (rbd_control/demo/teleop.py, rbd_mujoco_sim's ~/hand_target).

    force  = stiffness (p_target - p) - damping v            (N, world axes, at the origin)
    torque = grip e_o(q_target, q) - grip_damping omega      (N m, world axes)

p, v, q and omega are the link frame's origin, its velocity, orientation and angular
velocity; e_o the rotation vector from q to q_target, world axes (MuJoCo's mju_subQuat).
Evaluated at every physics step by the plant.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

__all__ = ["HandGains", "checked_hand_target", "hand_wrench"]


@dataclass(frozen=True)
class HandGains:
    stiffness: float = 400.0      # N/m
    damping: float = 40.0         # N s/m
    grip: float = 5.0             # N m/rad
    grip_damping: float = 0.5     # N m s/rad

    def __post_init__(self):
        for name in ("stiffness", "damping", "grip", "grip_damping"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0.0):
                raise ValueError(f"hand {name} must be a finite number >= 0, got {value!r}")


def checked_hand_target(position, quaternion_xyzw):
    """(position (3,), quaternion (w, x, y, z), MuJoCo's order) of a target, or ValueError."""
    p = np.asarray(position, dtype=float).reshape(-1)
    q = np.asarray(quaternion_xyzw, dtype=float).reshape(-1)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"hand target position must be 3 finite numbers, got {position!r}")
    norm = float(np.linalg.norm(q)) if q.shape == (4,) else math.nan
    if not abs(norm - 1.0) <= 0.01:
        raise ValueError(f"hand target quaternion (x, y, z, w) must be a unit quaternion, got "
                         f"{quaternion_xyzw!r}")
    return p, np.array([q[3], q[0], q[1], q[2]]) / norm


def _rotation_error(target_wxyz, q_wxyz) -> np.ndarray:
    """The rotation vector (world axes) that turns q into the target: MuJoCo's mju_subQuat
    gives it in q's frame (q quat(r) = target), rotated here into the world's."""
    local = np.zeros(3)
    mujoco.mju_subQuat(local, np.asarray(target_wxyz, dtype=float),
                       np.asarray(q_wxyz, dtype=float))
    world = np.zeros(3)
    mujoco.mju_rotVecQuat(world, local, np.asarray(q_wxyz, dtype=float))
    return world


def hand_wrench(gains: HandGains, target, target_wxyz, p, q_wxyz, v, omega):
    """(force, torque) of the hand (module doc)."""
    force = gains.stiffness * (np.asarray(target) - p) - gains.damping * np.asarray(v)
    torque = (gains.grip * _rotation_error(target_wxyz, np.asarray(q_wxyz))
              - gains.grip_damping * np.asarray(omega))
    return force, torque
