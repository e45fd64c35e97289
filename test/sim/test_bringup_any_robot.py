"""rbd_bringup --description ANY.urdf without --config, run as a user runs it: the controller
commands every moving joint of that robot, the simulator builds it, the demo trajectory
(planned inside its limits) is held and tracked, and the console says so; a description the
nodes refuse ends the run non-zero with their reason, within 20 s.

Each robot takes 12-14 s in lock step on a quiet 2-core machine (25-30 s while other tests
load it); bench/bringup_any_robot.py runs the same three, also in real time.
The bad arguments and a description the dynamics refuses start no node; the last tests are
ROS-free (the demo planned inside each robot's limits, --excite's periods).
"""
from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from by_path import load   # test/ (on sys.path from test/sim/conftest.py)

robots_dir = load("dynamics/dynamics_oracles.py", "rbd_test_dynamics_oracles").robots_dir

ROBOTS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
}
RMS_LIMIT_MRAD = 20.0
HOLD_LIMIT_MRAD = 10.0   # drift over the first second under the controller


def bringup(args, env, timeout):
    return subprocess.run([sys.executable, "-m", "rbd_control.bringup.launcher", *args],
                          env=env, capture_output=True, text=True, timeout=timeout)


def demo_outcome(output: str) -> float:
    """The RMS tracking error (mrad) of a demo that succeeded and a run that said done."""
    assert "demo trajectory goal accepted" in output, output
    found = re.search(r"demo trajectory ended SUCCESSFUL.*RMS tracking error ([0-9.]+) mrad",
                      output)
    assert found, output
    assert output.strip().splitlines()[-1].startswith("rbd_bringup: done: "), output
    return float(found[1])


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_bringup_tracks_the_demo_on_a_robot_without_a_config(ros_env, tmp_path, robot):
    description = robots_dir() / ROBOTS[robot]
    result = bringup(["--description", str(description), "--lockstep", "--demo-trajectory",
                      "--duration", "40", "--log-dir", str(tmp_path)], ros_env, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    held = re.search(r"held the start pose [0-9.]+ s: largest drift ([0-9.]+) mrad", output)
    assert held and float(held[1]) < HOLD_LIMIT_MRAD, output
    assert demo_outcome(output) < RMS_LIMIT_MRAD, output
    controller_log = (tmp_path / "controller.log").read_text()
    assert re.search(r"controlling \d+ joints", controller_log), controller_log
    assert "rejected robot description" not in controller_log, controller_log


def test_bringup_names_the_nodes_refusal_and_ends_within_20_s(ros_env, tmp_path):
    # the default arm's config (its joint names) for a UR5: every node refuses what it gets
    description = robots_dir() / ROBOTS["ur5"]
    from rbd_control.bringup.processes import find_config_file
    started = time.monotonic()
    result = bringup(["--description", str(description), "--config", str(find_config_file()),
                      "--lockstep", "--log-dir", str(tmp_path)], ros_env, timeout=60)
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert elapsed < 20.0, f"{elapsed:.1f} s\n{output}"
    assert re.search(r"rbd_\w+ refused the robot description: .*shoulder_pan", output), output
    assert "rbd_bringup: FAILED: " in output and "logs kept in" in output, output


@pytest.mark.parametrize("args, argument", [
    (["--excite", "-5"], "--excite"),
    (["--excite", "5"], "--excite"),
    (["--params-file", "missing.yaml"], "--params-file"),
    (["--duration", "-1"], "--duration"),
    (["--duration", "nan"], "--duration"),
])
def test_a_bad_argument_is_one_line_and_exit_2(ros_env, args, argument):
    result = bringup(args, ros_env, timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines) == 1 and lines[0].startswith(f"rbd_bringup: error: argument {argument}"), \
        result.stderr
    assert "logs in" not in result.stdout, "no node may start"


def test_a_description_the_dynamics_refuses_is_one_line_and_exit_2(ros_env, tmp_path):
    one_link = tmp_path / "one_link.urdf"
    one_link.write_text('<robot name="one"><link name="base"/></robot>')
    result = bringup(["--description", str(one_link)], ros_env, timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines) == 1 and "has no moving joint" in lines[0], result.stderr
    assert "logs in" not in result.stdout, "no node may start"


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_the_demo_is_planned_inside_each_robots_limits(robot):
    """ROS-free: waypoints.demo_waypoints from waypoints.start_pose stays LIMIT_MARGIN inside
    the position limits, and SOFT_LIMIT_ROOM times the controller's default soft-limit inset
    (a gripper's: a quarter of its travel), under VELOCITY_FRACTION of the velocity limits,
    and moves."""
    import numpy as np

    from rbd_control.bringup import waypoints
    from rbd_control.control.safety.command_limits import soft_inset
    from rbd_control.dynamics import load_urdf
    model = load_urdf((robots_dir() / ROBOTS[robot]).read_text())
    plan = waypoints.demo_waypoints(waypoints.start_pose(model), model.joint_names, model)
    times, q = np.array([p[0] for p in plan]), np.array([p[1] for p in plan])
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    margin = np.maximum(waypoints.LIMIT_MARGIN * (upper - lower), waypoints.SOFT_LIMIT_ROOM
                        * soft_inset(0.15, model.position_limits))
    assert np.all(q >= lower + margin - 1e-12) and np.all(q <= upper - margin + 1e-12)
    speed = waypoints._peak_speeds(times, q) / model.velocity_limit
    assert np.all(speed <= waypoints.VELOCITY_FRACTION + 1e-9), speed
    assert np.all(np.ptp(q, axis=0) > 0.0), "every joint moves"


def test_the_default_arms_demo_is_unchanged_by_its_limits():
    import numpy as np

    from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import load_urdf
    joints = list(DEFAULT_ARM_HOME)
    plain = demo_waypoints(DEFAULT_ARM_HOME, joints)
    limited = demo_waypoints(DEFAULT_ARM_HOME, joints, load_urdf(default_arm_urdf()))
    for a, b in zip(plain, limited):
        assert a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])


@pytest.mark.parametrize("seconds, period", [(10, 10), (15, 15), (25, 12.5), (30, 10)])
def test_excite_fills_any_duration_with_whole_periods(seconds, period):
    from rbd_control.bringup.excite import excitation_period
    assert excitation_period(seconds) == period


def test_a_refused_goal_is_said_with_the_controllers_reason(capsys):
    """DemoGoal without a node: the controller's answer to a goal it refuses (ABORTED before
    any feedback, its error_string the reason: trajectory_action.py) is one console line."""
    from types import SimpleNamespace

    control_msgs = pytest.importorskip("control_msgs.action")
    from rbd_control.bringup.demo_goal import DemoGoal
    goal = DemoGoal.__new__(DemoGoal)
    goal._action, goal.accepted, goal._samples = control_msgs.FollowJointTrajectory, False, 0
    reason = "point 0: panda_joint4 position -0.068 is outside its limits [-3.0718, -0.0698]"
    result = control_msgs.FollowJointTrajectory.Result(
        error_code=control_msgs.FollowJointTrajectory.Result.INVALID_GOAL, error_string=reason)
    goal._on_result(SimpleNamespace(result=lambda: SimpleNamespace(result=result)))
    assert goal.finished and not goal.succeeded
    assert capsys.readouterr().out == \
        f"rbd_bringup: the demo trajectory goal was refused (INVALID_GOAL): {reason}\n"
