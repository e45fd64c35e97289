"""Each robot profile holds and tracks its arm through the nodes in real time, as a user runs it:
`rbd_bringup --description ARM --profile NAME --demo-trajectory` (no --lockstep: the plant
steps on the wall clock, the controller answers the states it gets). The run must end with
exit status 0, the demo's RMS tracking error printed and bounded, the start pose's drift
bounded, and no joint past its soft limit (/joint_states sampled beside the run).

The arms are example-robot-data's: panda (franka_panda), ur5 as the UR e-Series' stand-in
(ur_e_series), so101 (so101); the plant adds gravity exactly when the profile says the robot
does (the profile's rbd_mujoco_sim section). Each run takes ~15 s. The profile files
themselves, without ROS: test/control/test_profile_files.py.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from by_path import load   # test/ (on sys.path from test/sim/conftest.py)

any_robot = load("sim/test_bringup_any_robot.py", "rbd_test_bringup_any_robot")
profile_files = load("control/test_profile_files.py", "rbd_test_profile_files")

pytestmark = pytest.mark.wall_clock   # setup.cfg: nothing else at normal priority beside them

ROBOTS = {"franka_panda": "panda", "ur_e_series": "ur5", "so101": "so101"}
RMS_LIMIT_MRAD = 20.0      # as test_bringup_any_robot's, in lock step
HOLD_LIMIT_MRAD = 10.0     # drift of the start pose before the demo is sent
RUN_TIMEOUT_S = 90.0
SAMPLE_PERIOD_S = 0.05     # /joint_states sampled at ~20 Hz: the nodes keep the 2 cores


def soft_limits(profile: str) -> dict:
    """{joint: (soft_lower, soft_upper)} the controller builds for the profile's arm
    (control/safety/command_limits.soft_limits, through a Controller configured by it)."""
    _, controller = profile_files.profile_controller(profile)
    joints = controller.command_limits.joints
    return {name: (float(joints.soft_lower[j]), float(joints.soft_upper[j]))
            for j, name in enumerate(controller.command_limits.joint_names)}


def run_sampled(args, env, node):
    """rbd_bringup with `args`, /joint_states sampled meanwhile (keep-last 1, best effort: one
    message deserialised per sample); (exit status, output, samples)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    samples = node.collect(JointState, "/joint_states",
                           QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    process = subprocess.Popen([sys.executable, "-m", "rbd_control.bringup.launcher", *args],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(SAMPLE_PERIOD_S)
            node.spin_for(0.002)
    finally:
        if process.poll() is None:
            process.kill()
        output, _ = process.communicate()
        node.stop_collecting()
    return process.returncode, output, samples


@pytest.mark.parametrize("profile", sorted(ROBOTS))
def test_each_profile_holds_and_tracks_its_arm_in_real_time(ros_env, ros_node, tmp_path,
                                                            profile):
    description = any_robot.robots_dir() / any_robot.ROBOTS[ROBOTS[profile]]
    status, output, samples = run_sampled(
        ["--description", str(description), "--profile", profile, "--demo-trajectory",
         "--duration", "40", "--log-dir", str(tmp_path)], ros_env, ros_node)
    assert status == 0, output
    held = re.search(r"held the start pose [0-9.]+ s: largest drift ([0-9.]+) mrad", output)
    assert held and float(held[1]) < HOLD_LIMIT_MRAD, output
    rms = any_robot.demo_outcome(output)
    assert rms < RMS_LIMIT_MRAD, output
    print(f"{profile} on {ROBOTS[profile]}: start drift {held[1]} mrad, RMS tracking "
          f"{rms:.3f} mrad, {len(samples)} joint states sampled")

    bounds = soft_limits(profile)
    assert len(samples) > 50, f"only {len(samples)} joint states sampled\n{output}"
    for msg in samples:
        for name, position in zip(msg.name, msg.position):
            lower, upper = bounds[name]
            assert lower - 1e-6 <= position <= upper + 1e-6, \
                f"{name} at {position:.4f}, outside its soft limits [{lower:.4f}, {upper:.4f}]"
    controller_log = (tmp_path / "controller.log").read_text()
    assert "oscillates" not in controller_log, controller_log


def test_the_arms_are_the_profile_files_own():
    """One list of profile -> arm for both tests."""
    assert {name: any_robot.ROBOTS[robot] for name, robot in ROBOTS.items()} == \
        profile_files.PROFILE_ROBOTS
