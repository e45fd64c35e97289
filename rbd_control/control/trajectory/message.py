"""The controller's trajectory input, shaped like trajectory_msgs/JointTrajectory (the ROS
adapter converts the message, ros/conversions.py); validated by validation.py, planned by plan.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

__all__ = ["TrajectoryPoint", "JointTrajectory"]


@dataclass
class TrajectoryPoint:
    """One waypoint. Empty or None velocities/accelerations/effort mean "not given"."""

    positions: Sequence[float]
    velocities: Optional[Sequence[float]] = None
    accelerations: Optional[Sequence[float]] = None
    effort: Optional[Sequence[float]] = None
    time_from_start: float = 0.0


@dataclass
class JointTrajectory:
    """Joint names plus waypoints; start_time in seconds on the controller's clock (0 = now)."""

    joint_names: Sequence[str]
    points: Sequence[TrajectoryPoint] = field(default_factory=list)
    start_time: float = 0.0

    @classmethod
    def from_arrays(cls, joint_names, times, q, qd=None, qdd=None, start_time=0.0):
        """Waypoints from arrays (len(times), n): positions, and velocities / accelerations
        when given."""
        def row(values, k):
            return None if values is None else values[k]
        points = [TrajectoryPoint(positions=q[k], velocities=row(qd, k),
                                  accelerations=row(qdd, k), time_from_start=float(t))
                  for k, t in enumerate(times)]
        return cls(list(joint_names), points, start_time=start_time)
