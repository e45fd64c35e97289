"""ModelSource: description source, de-duplication, gravity override, joint adoption and the
last good model, without ROS."""
import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.model.source import ModelRefused, ModelSource

PARAMETER = "the robot_description parameter"
TOPIC = "the robot_description topic"


def two_joint_urdf(effort="80"):
    link = ('<link name="{0}"><inertial><origin xyz="0.2 0 0"/><mass value="2"/><inertia'
            ' ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    joint = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
             '<origin xyz="{3} 0 0"/><axis xyz="0 1 0"/>'
             '<limit lower="-3" upper="3" effort="' + effort + '" velocity="2"/></joint>')
    return ('<robot name="pendulum"><link name="base"/>' + link.format('upper')
            + link.format('lower') + joint.format('hip', 'base', 'upper', 0.0)
            + joint.format('knee', 'upper', 'lower', 0.4) + '</robot>')


def test_parse_is_pure_and_install_makes_the_model_current(arm_urdf):
    source = ModelSource()
    candidate = source.parse(arm_urdf, TOPIC)
    assert source.current is None and source.model is None
    source.install(candidate)
    assert source.model is candidate.model
    assert candidate.model.name == "rbd_arm" and candidate.source == TOPIC


def test_an_unchanged_description_is_recognised(arm_urdf):
    source = ModelSource()
    assert not source.unchanged(arm_urdf)
    source.install(source.parse(arm_urdf, TOPIC))
    assert source.unchanged(arm_urdf)
    assert not source.unchanged(arm_urdf.replace('<mass value="2.9"/>', '<mass value="4.0"/>'))


@pytest.mark.parametrize("xml, reason", [
    ('<robot name="broken"><link', "Error"),
    ("not a urdf", "Error"),
])
def test_a_bad_description_is_refused_and_the_last_good_model_kept(arm_urdf, xml, reason):
    source = ModelSource()
    good = source.install(source.parse(arm_urdf, TOPIC))
    with pytest.raises(ModelRefused, match=reason):
        source.parse(xml, TOPIC)
    assert source.current is good


def test_gravity_override_applies_to_parse_and_regravitate(arm_urdf):
    source = ModelSource(gravity=(0.0, 0.0, -3.71))
    assert source.regravitate((0.0, 0.0, -1.0)) is None        # no model yet
    candidate = source.install(source.parse(arm_urdf, PARAMETER))
    np.testing.assert_allclose(candidate.model.gravity, [0.0, 0.0, -3.71])
    back = source.regravitate(())
    np.testing.assert_allclose(back.model.gravity, candidate.urdf_model.gravity)
    assert back.xml == candidate.xml and source.current is candidate   # regravitate is pure
    source.install(back, gravity=())
    assert source.gravity == () and source.current is back


def test_without_explicit_joints_another_robot_is_adopted(arm_urdf):
    source = ModelSource()
    source.install(source.parse(arm_urdf, TOPIC))
    candidate = source.parse(two_joint_urdf(), TOPIC)
    assert list(candidate.model.joint_names) == ["hip", "knee"]


def test_explicit_joints_refuse_a_robot_lacking_them(arm_urdf):
    source = ModelSource(joints=["shoulder_pan", "elbow"])
    source.install(source.parse(arm_urdf, TOPIC))
    with pytest.raises(ModelRefused, match=r"\['shoulder_pan', 'elbow'\] are not moving joints "
                                           r"of robot 'pendulum'"):
        source.parse(two_joint_urdf(), TOPIC)


def test_build_failure_refuses_the_description_with_the_reason(arm_urdf):
    """A zero effort limit parses but cannot be torque-controlled: refused, not half-used."""
    source = ModelSource(build=lambda model: Controller(model, ControllerConfig()))
    with pytest.raises(ModelRefused, match="knee"):
        source.parse(two_joint_urdf(effort="0"), PARAMETER)
    candidate = source.parse(two_joint_urdf(), PARAMETER)
    assert isinstance(candidate.built, Controller)


def test_the_parameter_wins_over_the_topic():
    source = ModelSource()
    assert not source.topic_ignored()
    source.parameter = "<robot/>"
    assert source.topic_ignored()
    source.parameter = ""
    assert not source.topic_ignored()


def test_set_model_keeps_the_gains_set_at_runtime_for_joints_that_persist(arm_urdf, arm_model):
    controller = Controller(arm_model, ControllerConfig(kd={"wrist_1": 7.0}))
    controller.set_gains(kp={"elbow": 123.0})
    default_kp = controller.gains.kp.copy()
    heavier = ModelSource().parse(arm_urdf.replace('<mass value="2.9"/>', '<mass value="4.0"/>'),
                                  TOPIC).model
    controller.set_model(controller.prepare_model(heavier))
    names = list(controller.joint_names)
    assert controller.gains.kp[names.index("elbow")] == 123.0           # set at runtime: kept
    assert controller.gains.kd[names.index("wrist_1")] == 7.0           # config: kept
    shoulder_lift = names.index("shoulder_lift")
    assert controller.gains.kp[shoulder_lift] > default_kp[shoulder_lift]
