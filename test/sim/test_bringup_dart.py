"""`rbd_bringup --sim dart`: the user's command, real time, the DART plant in the simulator node.

This test process watches the controller's tuning topics (~/desired, ~/error: stamped with the
state they answer) while the command runs on its own, as a user would run it.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dartpy", reason="--sim dart needs dartpy (pip install rbd_control[dart])")

from sensor_msgs.msg import JointState  # noqa: E402

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints  # noqa: E402

JOINTS = list(DEFAULT_ARM_HOME)
HOME = np.array([DEFAULT_ARM_HOME[j] for j in JOINTS])
TRAJECTORY_S = demo_waypoints(DEFAULT_ARM_HOME, JOINTS)[-1][0]
HOLD_LIMIT = 1e-2        # rad, while no trajectory moves the arm
TRACKING_RMS_LIMIT = 5e-3  # rad, over the demo trajectory in real time


def stamp_of(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def by_name(msg) -> np.ndarray:
    return np.array([msg.position[list(msg.name).index(j)] for j in JOINTS])


def test_bringup_with_dart_holds_and_tracks_the_demo_trajectory(ros_node, spawn_node, tmp_path):
    desired = ros_node.collect(JointState, "/rbd_controller/desired", 1000)
    errors = ros_node.collect(JointState, "/rbd_controller/error", 1000)
    bringup = spawn_node("rbd_control.bringup.launcher", node_name="rbd_bringup", args=[
        "--sim", "dart", "--mode", "computed_torque", "--demo-trajectory",
        "--duration", "40", "--log-dir", str(tmp_path / "logs")])

    def moving(msg):   # the desired pose is away from home: the trajectory is under way
        return np.abs(by_name(msg) - HOME).max() > 1e-4

    ros_node.wait_for(lambda: any(moving(d) for d in desired[-50:]) or not bringup.alive(), 60.0,
                      "the demo trajectory to start")
    assert bringup.alive(), bringup.log()
    # the first waypoint (home) is 0.5 s in; 1 s of holding home after the last one
    end = min(stamp_of(d) for d in desired if moving(d)) - 0.5 + TRAJECTORY_S
    ros_node.wait_for(lambda: stamp_of(desired[-1]) > end + 1.0 or not bringup.alive(), 60.0,
                      "the demo trajectory to end")
    simulator_log = (tmp_path / "logs" / "simulator.log").read_text()
    assert "in dart" in simulator_log, simulator_log[-2000:]

    error_at = {stamp_of(e): by_name(e) for e in errors}
    paired = [(moving(d), error_at[stamp_of(d)]) for d in desired if stamp_of(d) in error_at]
    hold = [error for is_moving, error in paired if not is_moving]
    tracking = [error for is_moving, error in paired if is_moving]
    assert len(hold) > 500 and len(tracking) > 0.5 * (TRAJECTORY_S - 0.5) * 1000, (len(hold), len(tracking))
    hold_error = float(np.abs(hold).max())
    rms = float(np.sqrt(np.mean(np.square(tracking))))
    print(f"\nrbd_bringup --sim dart: hold error {hold_error:.2e} rad, tracking RMS "
          f"{rms * 1e3:.3f} mrad over {len(tracking)} states")
    assert hold_error < HOLD_LIMIT
    assert rms < TRACKING_RMS_LIMIT, simulator_log[-2000:]
