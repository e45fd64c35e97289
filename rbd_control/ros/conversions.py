"""Message <-> core conversions. No logic beyond unpacking fields."""
from array import array

import numpy as np
from rbd_control.control import JointTrajectory, TrajectoryPoint


def seconds(stamp):
    """builtin_interfaces Time or Duration -> float seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def float_array(values):
    """numpy vector -> array('d'), which rclpy copies into a float64[] field without a loop."""
    return array('d', np.ascontiguousarray(values, dtype=np.float64).tobytes())


def joint_state_arrays(msg):
    """(names, q, qd) of a JointState; qd is None when the message carries no velocities."""
    q = np.frombuffer(msg.position, dtype=np.float64) if len(msg.position) else np.empty(0)
    qd = np.frombuffer(msg.velocity, dtype=np.float64) if len(msg.velocity) else None
    return msg.name, q, qd


def _optional(values):
    return list(values) if len(values) else None


def trajectory_from_msg(msg, now):
    """trajectory_msgs/JointTrajectory -> core JointTrajectory.

    A zero header stamp means "start now", as in joint_trajectory_controller.
    """
    stamp = seconds(msg.header.stamp)
    start_time = now if stamp == 0.0 else stamp
    points = [
        TrajectoryPoint(
            positions=list(point.positions),
            velocities=_optional(point.velocities),
            accelerations=_optional(point.accelerations),
            effort=_optional(point.effort),
            time_from_start=seconds(point.time_from_start),
        )
        for point in msg.points
    ]
    return JointTrajectory(list(msg.joint_names), points, start_time=start_time)


def fill_joint_state(msg, stamp, position=(), velocity=(), effort=()):
    """Set a JointState's stamp and values (joints order). The tuning topics use
    JointState so PlotJuggler labels every curve with its joint name and aligns the
    topics by header stamp; rqt_plot reads e.g. /rbd_controller/error/position[2]."""
    msg.header.stamp = stamp
    msg.position = float_array(position)
    msg.velocity = float_array(velocity)
    msg.effort = float_array(effort)
    return msg


def time_msg(seconds_, msg_type=None):
    """float seconds -> builtin_interfaces Time (or `msg_type`, e.g. Duration), rounded to
    the nanosecond; the inverse of `seconds`."""
    if msg_type is None:
        from builtin_interfaces.msg import Time as msg_type
    nanoseconds = int(round(seconds_ * 1e9))
    return msg_type(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def joint_trajectory_msg(joints, points):
    """trajectory_msgs/JointTrajectory from (time_from_start, q, qd, qdd) tuples; stamp 0 = now."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory()
    msg.joint_names = list(joints)
    for t, q, qd, qdd in points:
        point = JointTrajectoryPoint()
        point.positions = [float(x) for x in q]
        if qd is not None:
            point.velocities = [float(x) for x in qd]
        if qdd is not None:
            point.accelerations = [float(x) for x in qdd]
        point.time_from_start = time_msg(t, Duration)
        msg.points.append(point)
    return msg
