"""rbd_control.description.files: .urdf and .xacro files -> URDF text, with the real xacro.

robots/two_link.urdf.xacro uses xacro:arg, xacro:property (a value and a block),
xacro:macro and xacro:include of robots/segment.xacro; its arguments change the joint
names, a link length and the effort limits, so each test can see they were applied.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rbd_control.description import default_arm_path, default_arm_urdf
from rbd_control.description.files import (DescriptionError, description_for_launch,
                                           parse_mappings, read_description)
from rbd_control.dynamics import load_urdf
from rbd_control.dynamics.model import XTREE_R

ROBOTS = Path(__file__).resolve().parent / "robots"
TWO_LINK = ROBOTS / "two_link.urdf.xacro"
ARGS = {"prefix": "left_", "upper_length": "0.45", "effort": "35"}


def _robots_dir() -> Path:
    """example-robot-data's robots, through the dynamics tests' helper."""
    oracles = Path(__file__).resolve().parents[1] / "dynamics" / "dynamics_oracles.py"
    spec = importlib.util.spec_from_file_location("rbd_test_dynamics_oracles", oracles)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.robots_dir()


def _error(path, mappings=None) -> str:
    with pytest.raises(DescriptionError) as caught:
        read_description(path, mappings)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message, message
    return message


def test_xacro_arguments_reach_the_model():
    model = load_urdf(read_description(TWO_LINK, ARGS))
    assert model.joint_names == ("left_shoulder", "left_elbow")
    assert np.allclose(model.effort_limit, [35.0, 35.0])
    # the elbow sits upper_length above the shoulder: r of its Xtree (RBDA chapter 4)
    elbow = model.joint_names.index("left_elbow")
    assert np.allclose(model.bodies[elbow, XTREE_R], [0.0, 0.0, 0.45])


def test_xacro_defaults_apply_without_arguments():
    model = load_urdf(read_description(TWO_LINK))
    assert model.joint_names == ("shoulder", "elbow")
    assert np.allclose(model.effort_limit, [20.0, 20.0])


def test_expansion_is_what_the_xacro_command_prints():
    executable = shutil.which("xacro")
    assert executable, "the xacro package's command is missing (pip install xacro)"
    printed = subprocess.run(
        [executable, str(TWO_LINK), *(f"{k}:={v}" for k, v in ARGS.items())],
        check=True, capture_output=True, text=True).stdout
    assert read_description(TWO_LINK, ARGS).strip() == printed.strip()


def test_a_urdf_is_read_as_it_is():
    assert read_description(default_arm_path()) == default_arm_urdf()


def test_mappings_parse_like_xacros_command_line():
    assert parse_mappings(["prefix:=left_", " upper_length := 0.45", "empty:="]) == {
        "prefix": "left_", "upper_length": "0.45", "empty": ""}
    for bad in ("prefix=left_", ":=1", "prefix"):
        with pytest.raises(DescriptionError, match="is not name:=value"):
            parse_mappings([bad])


def test_file_errors_are_one_line_naming_the_file(tmp_path):
    assert "no such file" in _error(tmp_path / "missing.urdf.xacro")
    other = tmp_path / "robot.sdf"
    other.write_text("<sdf/>")
    assert "unknown extension '.sdf'" in _error(other)
    assert "apply to .xacro files only" in _error(default_arm_path(), {"prefix": "left_"})


@pytest.mark.parametrize("text, expected", [
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a"></robot>',
     "mismatched tag"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:arg name="n"/></robot>',
     "missing attribute 'default'"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="${undefined_name}"/></robot>',
     "undefined_name"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="$(arg nowhere)"/></robot>',
     "nowhere"),
], ids=["malformed", "arg-without-default", "undefined-property", "undefined-arg"])
def test_xacro_errors_are_one_line_naming_the_file(tmp_path, text, expected):
    path = tmp_path / "broken.urdf.xacro"
    path.write_text(text)
    assert expected in _error(path)


def test_an_error_in_an_included_file_names_it(tmp_path):
    (tmp_path / "inner.xacro").write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="${1 / 0}"/></robot>')
    outer = tmp_path / "outer.urdf.xacro"
    outer.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                     '<xacro:include filename="inner.xacro"/></robot>')
    message = _error(outer)
    assert "division by zero" in message and str(tmp_path / "inner.xacro") in message


def test_a_third_party_xacro_that_fails_gives_one_line():
    # example-robot-data's hector quadrotor includes itself through package://, which
    # xacro does not resolve: its own error, reported without a traceback.
    path = _robots_dir() / "hector_description" / "robots" / "quadrotor_base.xacro"
    assert "No such file or directory" in _error(path)


def test_launch_files_pass_other_configurations_to_xacro_only():
    configurations = {"mode": "computed_torque", "description_file": str(TWO_LINK), **ARGS}
    text = description_for_launch(TWO_LINK, configurations, ("mode", "description_file"), {})
    assert load_urdf(text).joint_names == ("left_shoulder", "left_elbow")
    # a plain URDF ignores them (an including launch file's) and gets $(find pkg) resolved
    text = description_for_launch(default_arm_path(), configurations, ("mode",),
                                  {"rbd_control": "/opt/share/rbd_control"})
    assert "$(find rbd_control)" not in text
    assert "/opt/share/rbd_control/config/gz_controllers.yaml" in text
