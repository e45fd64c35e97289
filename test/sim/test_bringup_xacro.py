"""rbd_bringup --description robot.urdf.xacro name:=value, run for real: the description
publisher, rbd_mujoco_sim and rbd_controller must all work on the expanded URDF.

The robot is test/description/robots/two_link.urdf.xacro (xacro:arg, xacro:property,
xacro:macro, xacro:include); its arguments rename the joints (prefix), move the elbow
(upper_length) and set the effort limits (effort), so each is visible downstream.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

from rbd_control.dynamics import load_urdf
from rbd_control.dynamics.model import XTREE_R

REPO = Path(__file__).resolve().parents[2]
TWO_LINK = REPO / "test" / "description" / "robots" / "two_link.urdf.xacro"
JOINTS = ["left_shoulder", "left_elbow"]


def two_link_config(path: Path) -> Path:
    """The shipped controller YAML with this robot's joints and the default gains."""
    document = yaml.safe_load((REPO / "config" / "arm_controller.yaml").read_text())
    parameters = document["/**"]["ros__parameters"]
    parameters["joints"] = JOINTS
    parameters.pop("gains", None)
    path.write_text(yaml.safe_dump(document))
    return path


def bringup(args, env, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "rbd_control.bringup.launcher", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_bringup_expands_a_xacro_for_every_node(ros_env, ros_node, tmp_path):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String

    from rbd_control.ros.qos import ROBOT_DESCRIPTION_QOS

    descriptions = ros_node.collect(String, "/robot_description", ROBOT_DESCRIPTION_QOS)
    states = ros_node.collect(JointState, "/joint_states")
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands")
    process = bringup(
        ["--description", str(TWO_LINK), "prefix:=left_", "upper_length:=0.45", "effort:=35",
         "--config", str(two_link_config(tmp_path / "two_link.yaml")),
         "--lockstep", "--duration", "12", "--log-dir", str(tmp_path)],
        ros_env)
    try:
        # each topic's subscription matches on its own: wait for every one (the probe is
        # not spun after this, so a topic still unmatched here would stay empty)
        ros_node.wait_for(lambda: descriptions and states and len(commands) > 200, timeout=60,
                          what="the description, joint states and 200 effort commands")
    finally:
        if process.poll() is None:
            process.wait(timeout=60)
    output = process.stdout.read() + process.stderr.read()
    assert process.returncode == 0, output
    assert "remap rule" not in output, "name:=value reached rclpy as a remapping:\n" + output

    # the published description is the expansion with the arguments given
    model = load_urdf(descriptions[-1].data)
    assert model.joint_names == tuple(JOINTS)
    assert np.allclose(model.effort_limit, [35.0, 35.0])
    assert np.allclose(model.bodies[model.joint_names.index("left_elbow"), XTREE_R],
                       [0.0, 0.0, 0.45])
    # the simulator built its plant from it (prefixed names), the controller its model
    assert states and list(states[-1].name) == JOINTS
    assert all(len(c.data) == 2 and np.all(np.abs(c.data) <= 35.0) for c in commands)
    controller_log = (tmp_path / "controller.log").read_text()
    assert "model 'two_link' from the robot_description topic: controlling 2 joints" in \
        controller_log, controller_log
    simulator_log = (tmp_path / "simulator.log").read_text()
    assert "2 joints" in simulator_log and "left_elbow" in simulator_log, simulator_log


def test_bringup_refuses_a_bad_description_in_one_line(ros_env, tmp_path):
    broken = tmp_path / "broken.urdf.xacro"
    broken.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                      '<link name="${1 / 0}"/></robot>')
    cases = [
        ([str(tmp_path / "missing.xacro")], "no such file"),
        ([str(tmp_path / "two_link.yaml")], "unknown extension"),
        ([str(broken)], "division by zero"),
        ([str(TWO_LINK), "prefix=left_"], "is not name:=value"),
    ]
    (tmp_path / "two_link.yaml").write_text("{}")
    for args, expected in cases:
        process = bringup(["--description", *args], ros_env)
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 2, stdout + stderr
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and "Traceback" not in stderr, stderr
        assert lines[0].startswith("rbd_bringup: error: "), stderr
