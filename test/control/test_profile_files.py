"""Robot profiles (config/profiles/*.yaml) without ROS: each file is a ROS 2 parameter file whose
every value is a parameter of its node's table, of the type rcl takes, accepted by the table's
checks and by the controller core on the profile's own arm, and cited beside it; a profile
name that does not exist, a negative torque rate and soft limits outside the hard ones (a
negative limits.soft_margin) are refused with a reason naming them.

The profiles through the nodes, in real time, on their arms: test/sim/test_profiles.py.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402
from rbd_control.bringup import profiles  # noqa: E402
from rbd_control.bringup.arguments import parse_args  # noqa: E402
from rbd_control.bringup.profiles import (NO_PROFILE, PROFILE_TABLES,  # noqa: E402
                                          profile_refusal, profile_sections)
from rbd_control.bringup.processes import CONTROLLER_NODE, SIMULATOR_NODE  # noqa: E402

robots_dir = load("dynamics/dynamics_oracles.py", "rbd_test_dynamics_oracles").robots_dir

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted((REPO / "config" / "profiles").glob("*.yaml"))
ROBOT_PROFILES = [path for path in PROFILES if path.stem != NO_PROFILE]
# what every robot profile declares (issue: gravity, loop, torque rate, limits and margins)
DECLARED = {"robot_compensates_gravity", "expected_state_period", "expected_delay",
            "limits.torque_rate", "limits.joint_limits", "limits.soft_margin"}
# a comment cites a source (a document and its section, a library constant, a file) or says
# that the figure is not published and what was chosen
CITATION = re.compile(r"not published|manual|documentation|datasheet|memory table|"
                      r"\.h\b|\.xacro|\.urdf|\.yaml|\.md|launch files|kMax|STS", re.IGNORECASE)
# example-robot-data's arm each profile is tried on (the sim test uses the same)
PROFILE_ROBOTS = {"franka_panda": "panda_description/urdf/panda.urdf",
                  "ur_e_series": "ur_description/urdf/ur5_robot.urdf",
                  "so101": "so_arm_description/urdf/so101.urdf"}


def test_the_profiles_are_the_ones_documented():
    assert {path.stem for path in PROFILES} == {"franka_panda", "ur_e_series", "so101", "none"}
    assert profiles.profile_names() == tuple(sorted(path.stem for path in PROFILES))


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_every_value_is_a_parameter_of_its_node_that_its_table_accepts(path):
    assert profile_refusal(path) is None
    sections = profile_sections(path)
    assert set(sections) <= set(PROFILE_TABLES)
    if path.stem == NO_PROFILE:
        assert sections == {}, "the profile 'none' sets nothing"
        return
    controller = sections[CONTROLLER_NODE]
    assert DECLARED <= set(controller), DECLARED - set(controller)
    # on in every profile, as the package default: a real arm is kept off its stops
    assert controller["limits.joint_limits"] is True
    assert controller["limits.torque_rate"] > 0.0
    # the simulated plant adds gravity exactly when the robot does
    assert sections[SIMULATOR_NODE]["plant_compensates_gravity"] == \
        controller["robot_compensates_gravity"]


@pytest.mark.parametrize("path", ROBOT_PROFILES, ids=lambda p: p.stem)
def test_every_value_has_its_source_in_a_comment_beside_it(path):
    """The comment lines right above a value (or on its line) cite where it comes from."""
    comment: list[str] = []
    values = 0
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped)
            continue
        setting = re.match(r"^ {4}([\w.]+):\s*(\S[^#]*?)\s*(#.*)?$", line)
        if setting:
            values += 1
            said = " ".join(comment + [setting[3] or ""])
            assert CITATION.search(said), f"{path.name}: {setting[1]} has no cited source"
        comment = []
    assert values == sum(len(v) for v in profile_sections(path).values())


def profile_controller(name: str):
    """(the profile's rbd_controller values, a Controller on its arm configured by them, as
    the node reads its parameters: ControllerConfig.from_parameters, checked)."""
    from rbd_control.control import Controller, ControllerConfig
    from rbd_control.dynamics import load_urdf
    from rbd_control.params.controller import CONTROLLER_PARAMETERS

    values = profile_sections(REPO / "config" / "profiles" / f"{name}.yaml")[CONTROLLER_NODE]
    config = ControllerConfig.from_parameters(
        lambda parameter: values.get(parameter, CONTROLLER_PARAMETERS[parameter].default))
    config.check()
    model = load_urdf((robots_dir() / PROFILE_ROBOTS[name]).read_text())
    return values, Controller(model, config)


@pytest.mark.parametrize("name", sorted(PROFILE_ROBOTS))
def test_the_core_takes_each_profile_on_its_arm(name):
    """ControllerConfig from the profile's values passes its checks, and a Controller on the
    profile's arm builds its limits from them."""
    values, controller = profile_controller(name)
    limits = controller.command_limits
    assert limits.bounded == values["limits.joint_limits"]
    assert limits.torque_rate == values["limits.torque_rate"]
    assert limits.compensates_gravity == values["robot_compensates_gravity"]


def test_an_unknown_profile_is_one_line_naming_it_and_the_known_ones(capsys):
    with pytest.raises(SystemExit) as stopped:
        parse_args(["--profile", "kuka_iiwa"])
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rbd_bringup: error: argument --profile:")
    assert "'kuka_iiwa'" in lines[0]
    assert all(path.stem in lines[0] for path in PROFILES), lines[0]


def test_a_known_profile_is_taken():
    assert parse_args(["--profile", "so101"]).profile == "so101"
    assert parse_args([]).profile is None


@pytest.mark.parametrize("setting, named", [
    ("limits.torque_rate: -1000.0", "limits.torque_rate"),
    # soft limits outside the hard ones: a margin below zero
    ("limits.soft_margin: -0.1", "limits.soft_margin"),
    ("limits.torque_rate: 1000", "limits.torque_rate must be a YAML double"),
    ("expected_state_period: 0.0", "expected_state_period"),
    ("limits.joint_limits: 1", "limits.joint_limits must be a YAML bool"),
    ("gains.shoulder_pan.p: 100.0", "gains.shoulder_pan.p is not a parameter of rbd_controller "
                                    "for every robot"),
    ("no_such_parameter: 1.0", "no_such_parameter is not a parameter"),
])
def test_a_bad_value_is_refused_with_a_reason_naming_it(tmp_path, setting, named):
    path = tmp_path / "mine.yaml"
    path.write_text(f"rbd_controller:\n  ros__parameters:\n    {setting}\n")
    reason = profile_refusal(path)
    assert reason is not None and reason.startswith("mine.yaml: ") and named in reason, reason


def test_a_file_that_is_no_parameter_file_is_refused(tmp_path):
    path = tmp_path / "odd.yaml"
    path.write_text("rbd_mujoco_sim:\n  plant_compensates_gravity: true\n")
    assert "rbd_mujoco_sim has no ros__parameters" in profile_refusal(path)
    path.write_text("some_other_node:\n  ros__parameters:\n    x: 1.0\n")
    assert "unknown node 'some_other_node'" in profile_refusal(path)


def test_the_profile_goes_before_the_users_files_to_both_nodes(tmp_path):
    """rbd_bringup's configuration: the profile's file after --config, before --params-file
    (user files win); the simulator gets both, each node reading its own sections, before its
    own parameters; 'none' passes none."""
    from rbd_control.bringup.launcher import config_from_args

    mine = tmp_path / "mine.yaml"
    mine.write_text("rbd_controller:\n  ros__parameters:\n    limits.torque_rate: 10.0\n")
    config, _ = config_from_args(parse_args(["--profile", "franka_panda",
                                             "--params-file", str(mine)]))
    profile = profiles.profile_file("franka_panda")
    assert config.controller_params_files == [profile, mine]
    assert config.simulator_params_files == [profile, mine]
    config, _ = config_from_args(parse_args(["--profile", "none", "--params-file", str(mine)]))
    assert config.controller_params_files == [mine] and config.simulator_params_files == [mine]
