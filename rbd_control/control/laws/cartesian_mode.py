"""The targets of mode cartesian_impedance as Controller.set_pose_target / set_wrench_target take
them: checked here, before they reach the law (cartesian.py), so that a malformed target is a
TrajectoryError naming what is wrong and the law only ever sees finite numbers. No rclpy.
"""
from __future__ import annotations

import numpy as np

from rbd_control.control.errors import TrajectoryError
from rbd_control.control.laws.pose import unit_quaternion

__all__ = ["check_takes_cartesian_goals", "checked_pose", "checked_wrench"]


def check_takes_cartesian_goals(mode: str):
    """Pose and wrench targets are admitted in cartesian_impedance only (TrajectoryError)."""
    if mode != "cartesian_impedance":
        raise TrajectoryError(f"mode {mode} does not take pose or wrench targets; "
                              "switch to cartesian_impedance")


def checked_pose(position, quaternion_xyzw):
    """(position (3,), unit quaternion (x, y, z, w)) of a pose target in the base frame."""
    try:
        position = np.asarray(position, dtype=float).reshape(-1)
        if position.shape != (3,) or not np.all(np.isfinite(position)):
            raise ValueError(f"position must be 3 finite numbers, got {position!r}")
        quaternion = unit_quaternion(quaternion_xyzw)
    except (TypeError, ValueError) as exc:
        raise TrajectoryError(f"bad pose target: {exc}") from None
    return position, quaternion


def checked_wrench(wrench) -> np.ndarray:
    """[fx, fy, fz, tx, ty, tz] (base axes, at the end-effector origin) as 6 finite numbers."""
    try:
        wrench = np.asarray(wrench, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        wrench = np.zeros(0)
    if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
        raise TrajectoryError(f"wrench must be 6 finite numbers, got {wrench!r}")
    return wrench
