"""Default gains stay finite and positive where a joint moves no mass (H_ii = 0), and the floor
(a millionth of the model's largest h) leaves real small inertias alone."""
import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.laws.loop_design import INERTIA_FLOOR_FRACTION, reference_inertia
from rbd_control.dynamics import crba, load_urdf

LINK = ('<link name="{name}"><inertial><origin xyz="0.2 0 0"/><mass value="{mass}"/>'
        '<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial></link>')
JOINT = ('<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
         '<origin xyz="0.3 0 0"/><axis xyz="0 0 1"/>'
         '<limit lower="-2" upper="2" effort="50" velocity="2"/></joint>')


def arm_with_massless_finger():
    return ('<robot name="hand"><link name="base"/>' + LINK.format(name="palm", mass=2, i=0.01)
            + JOINT.format(name="wrist", parent="base", child="palm")
            + LINK.format(name="tip", mass=1e-3, i=1e-9)
            + JOINT.format(name="tip_joint", parent="palm", child="tip")
            + '<link name="ghost"/>'
            + JOINT.format(name="ghost_joint", parent="palm", child="ghost")
            + '</robot>')


def test_a_massless_joint_gets_the_floor_and_a_light_one_keeps_its_own_inertia():
    model = load_urdf(arm_with_massless_finger())
    assert any("'ghost_joint'" in w for w in model.warnings)
    h = reference_inertia(model)
    i = {name: k for k, name in enumerate(model.joint_names)}
    assert h[i["ghost_joint"]] == pytest.approx(INERTIA_FLOOR_FRACTION * h.max())
    light = crba(model, np.zeros(model.nq))[i["tip_joint"], i["tip_joint"]]
    assert h[i["tip_joint"]] == pytest.approx(light, rel=0.5), "a real small h is not lifted"
    assert h[i["tip_joint"]] > h[i["ghost_joint"]]


def test_the_controller_commands_finite_torques_for_a_massless_joint():
    model = load_urdf(arm_with_massless_finger())
    controller = Controller(model, ControllerConfig(mode="feedforward_pd"))
    q = np.array([0.2, -0.3, 0.5])
    controller.update(0.0, model.joint_names, q, np.zeros(3))
    command = controller.update(0.001, model.joint_names, q + 0.01, np.full(3, 0.1))
    assert np.all(np.isfinite(command.tau)) and np.all(np.abs(command.tau) <= 50.0)
    computed = Controller(model, ControllerConfig(mode="computed_torque"))
    computed.update(0.0, model.joint_names, q, np.zeros(3))
    assert np.all(np.isfinite(computed.update(0.001, model.joint_names, q + 0.01,
                                              np.full(3, 0.1)).tau))
