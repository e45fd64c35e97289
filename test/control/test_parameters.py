"""The declarative parameter table: lookup, validation, per-joint templates, and
ControllerConfig taking its defaults and checks from it and being read from it
(ControllerConfig.from_parameters)."""
import math

import pytest

from rbd_control.control import ControllerConfig
from rbd_control.control.errors import ConfigError
from rbd_control.control.safety.oscillation import OscillationThresholds
from rbd_control.params.controller import CONTROLLER_PARAMETERS as TABLE, MODES, SAFE_ACTIONS
from rbd_control.params.table import Parameter, ParameterTable

JOINTS = {"shoulder_pan", "elbow"}


@pytest.mark.parametrize("name, value, reason", [
    ("mode", "impedance", "unknown mode 'impedance'"),
    ("safe_action", "brake", "unknown safe_action 'brake'"),
    ("state_timeout", 0.0, "state_timeout must be a finite number in (0, 10]"),
    ("state_timeout", math.inf, "state_timeout"),
    ("effort_scale", 1.5, "effort_scale must be a finite number in (0, 1]"),
    ("damping", -1.0, "damping"),
    ("gravity", [0.0, -9.81], "gravity needs 3 values"),
    ("gravity", [0.0, 0.0, math.nan], "finite"),
    ("joints", ["elbow", "elbow"], "twice"),
    ("command_topic", "", "must not be empty"),
    ("gains.elbow.p", -1.0, "gains.elbow.p must be a finite number"),
    ("gains.elbow.i_clamp", math.nan, "gains.elbow.i_clamp"),
    ("gains.knee.d", 1.0, "'knee', which is not a controlled joint"),
])
def test_bad_values_are_refused_with_a_reason(name, value, reason):
    assert reason in (TABLE.validate(name, value, JOINTS) or "")


@pytest.mark.parametrize("name, value", [
    ("mode", "computed_torque"), ("state_timeout", 10.0), ("effort_scale", 1.0),
    ("gravity", []), ("gravity", [0.0, 0.0, -3.71]), ("joints", []), ("gains.elbow.p", 0.0),
    ("gains.shoulder_pan.i_clamp", 30.0), ("use_sim_time", True),
])
def test_good_values_pass(name, value):
    assert TABLE.validate(name, value, JOINTS) is None


def test_per_joint_templates_resolve_joint_names_with_dots():
    parameter, joint = TABLE.lookup("gains.arm.link.2.i_clamp")
    assert parameter.name == "gains.<joint>.i_clamp" and joint == "arm.link.2"
    assert TABLE.lookup("gains..p") is None and TABLE.lookup("gains.elbow.q") is None


def test_choices_are_defined_once():
    assert TABLE["mode"].choices == MODES
    assert TABLE["safe_action"].choices == SAFE_ACTIONS
    assert "one of: hold, zero" in TABLE["safe_action"].constraints_text()


def test_controller_config_defaults_come_from_the_table():
    config = ControllerConfig()
    for name in ("mode", "state_timeout", "effort_scale", "safe_action",
                 "allow_partial_joints_goal"):
        assert getattr(config, name) == TABLE.default(name), name


def test_controller_config_check_uses_the_table_reason():
    with pytest.raises(ConfigError, match="effort_scale must be a finite number in \\(0, 1\\]"):
        ControllerConfig(effort_scale=0.0).check()


def test_a_table_refuses_a_parameter_defined_twice_or_an_unknown_type():
    with pytest.raises(ValueError, match="twice"):
        ParameterTable([Parameter("a", "bool", True, ""), Parameter("a", "bool", False, "")])
    with pytest.raises(ValueError, match="unknown type"):
        Parameter("a", "float", 1.0, "")


def test_custom_check_and_open_bounds():
    parameter = Parameter("x", "double", 1.0, "", low=0.0, high=2.0, high_open=True,
                          check=lambda v: "x must not be 1.5" if v == 1.5 else None)
    assert parameter.validate(0.0) is None
    assert "[0, 2)" in parameter.validate(2.0)
    assert parameter.validate(1.5) == "x must not be 1.5"


def test_gain_field_names_the_joint_and_the_core_field_of_gains_only():
    from rbd_control.params.controller import gain_field
    assert gain_field("gains.elbow.i_clamp") == ("elbow", "i_clamp")
    assert gain_field("gains.elbow.p") == ("elbow", "kp")
    assert gain_field("mode") is None and gain_field("friction.elbow.viscous") is None


def test_the_friction_epsilon_default_is_identifications():
    from rbd_control.params.controller import FRICTION_EPSILON
    from rbd_control.dynamics.friction import DEFAULT_EPSILON
    assert FRICTION_EPSILON == DEFAULT_EPSILON


def _reading(overrides=None):
    """value(name) over the table's defaults (`overrides` on top), recording the names read."""
    read = []

    def value(name):
        read.append(name)
        return (overrides or {}).get(name, TABLE.default(name))
    return value, read


def test_from_parameters_reads_every_parameter_named_like_a_config_field_and_the_groups():
    from dataclasses import fields
    value, read = _reading({"contact.enabled": True})
    config = ControllerConfig.from_parameters(value)
    named = {f.name for f in fields(ControllerConfig)} & {p.name for p in TABLE.fixed}
    assert named >= {"mode", "joints", "bandwidth_hz", "fixed_positions", "ee_link"}
    groups = {p.name for p in TABLE.fixed
              if p.name.startswith(("contact.", "oscillation.", "limits.", "joint_impedance."))}
    assert set(read) == named | groups
    assert config.contact is not None and config.oscillation == OscillationThresholds()


def test_from_parameters_on_the_table_defaults_is_the_default_config():
    value, _ = _reading()
    assert ControllerConfig.from_parameters(value) == ControllerConfig()


def test_from_parameters_takes_the_values_as_the_core_does():
    value, _ = _reading({
        "mode": "computed_torque", "joints": ["elbow", "wrist"], "bandwidth_hz": 4.0,
        "fixed_positions": ["gripper=0.02"], "cartesian_stiffness": [5.0] * 6,
        "nullspace_posture": [], "contact.enabled": True, "contact.reaction": "float",
        "contact.torque_thresholds": [1.0, 2.0, 1.0, 2.0], "oscillation.cycles": 4.0})
    config = ControllerConfig.from_parameters(value, gains={"kp": {"elbow": 50.0}})
    assert (config.mode, config.joints, config.bandwidth_hz) == (
        "computed_torque", ("elbow", "wrist"), 4.0)
    assert config.fixed_positions == {"gripper": 0.02} and config.nullspace_posture is None
    assert config.cartesian_stiffness == (5.0,) * 6 and config.kp == {"elbow": 50.0}
    assert config.contact.reaction == "float"
    assert config.contact.torque_thresholds == (1.0, 2.0, 1.0, 2.0)
    assert config.oscillation.cycles == 4.0
    config.check()


def test_every_field_named_like_a_parameter_has_the_tables_default():
    from rbd_control.control.contact import ContactConfig
    from rbd_control.control.safety.command_limits import LimitsConfig
    from rbd_control.control.safety.health import HealthThresholds
    for config, group in ((ControllerConfig(), ""), (ContactConfig(), "contact"),
                          (OscillationThresholds(), "oscillation"), (LimitsConfig(), "limits"),
                          (HealthThresholds(), "diagnostics")):
        backed = TABLE.backing(config, group)
        assert backed, group
        for name, parameter in backed:
            assert getattr(config, name) == TABLE.core_default(parameter.name), parameter.name


@pytest.mark.parametrize("fields, match", [
    (dict(bandwidth_hz=0.0), r"bandwidth_hz must be a finite number in \[0.01, 1000\]"),
    (dict(bandwidth_hz=1e-300), r"bandwidth_hz must be a finite number in \[0.01, 1000\]"),
    (dict(damping_ratio=math.inf), "damping_ratio"),
    (dict(expected_delay=-0.01), "expected_delay"),
    (dict(joints=["elbow", ""]), "empty name"),
    (dict(oscillation=OscillationThresholds(soften=0.0)), "oscillation.soften"),
])
def test_config_check_refuses_by_the_tables_rules(fields, match):
    with pytest.raises(ConfigError, match=match):
        ControllerConfig(**fields).check()


def test_per_joint_values_of_a_gain_like_field_are_left_to_the_gain_resolution():
    ControllerConfig(damping=[1.0, 2.0], nullspace_stiffness={"elbow": 3.0},
                     nullspace_posture=0.5).check()
