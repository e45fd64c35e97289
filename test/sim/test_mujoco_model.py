"""The MuJoCo plant must have exactly the URDF's rigid-body dynamics.

Pinocchio is the independent oracle: with joint losses off, MuJoCo's inverse dynamics
and mass matrix must equal Pinocchio's RNEA and CRBA for the same joint names.
"""
from __future__ import annotations

import json
import subprocess
import sys

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from rbd_control.dynamics import ModelError, gravity, load_urdf
from rbd_control.sim import Payload, build_mujoco_model, joint_index
from rbd_control.sim.mujoco_model import build_mujoco_plant, full_mass_matrix

# Fixed-base arms with only revolute/prismatic joints (Pinocchio nq == nv), from
# small to a 19-DoF tree with a mimic-free gripper pair.
ROBOTS = [
    "panda_description/urdf/panda.urdf",
    "ur_description/urdf/ur5_robot.urdf",
    "z1_description/urdf/z1.urdf",
    "xarm_description/urdf/xarm7.urdf",
    "baxter_description/urdf/baxter.urdf",
]


def _pin_model(urdf: str) -> pin.Model:
    model = pin.buildModelFromXML(urdf)
    assert model.nq == model.nv, "oracle comparison assumes no continuous joints"
    return model


def _joint_names(model: pin.Model) -> list[str]:
    return [model.names[i] for i in range(1, model.njoints)]


def _random_states(model: pin.Model, count: int, seed: int):
    """States strictly inside the joint limits, so MuJoCo has no active limit constraint."""
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(model.lowerPositionLimit), model.lowerPositionLimit, -np.pi)
    upper = np.where(np.isfinite(model.upperPositionLimit), model.upperPositionLimit, np.pi)
    for _ in range(count):
        q = lower + (upper - lower) * rng.uniform(0.05, 0.95, model.nq)
        yield q, rng.normal(size=model.nv) * 2.0, rng.normal(size=model.nv) * 5.0


@pytest.mark.parametrize("relative", ROBOTS)
def test_inverse_dynamics_and_mass_matrix_equal_pinocchio(robot_urdf, relative):
    urdf = robot_urdf(relative)
    pmodel = _pin_model(urdf)
    pdata = pmodel.createData()
    model = build_mujoco_model(urdf, joint_damping=False)
    data = mujoco.MjData(model)
    index = joint_index(model, _joint_names(pmodel))
    assert model.nv == pmodel.nv

    for q, qd, qdd in _random_states(pmodel, count=20, seed=1):
        index.set_positions(data, q)
        index.set_velocities(data, qd)
        data.qacc[:] = index.dof_vector(qdd, model.nv)
        mujoco.mj_inverse(model, data)
        tau = index.take_dofs(data.qfrc_inverse)
        np.testing.assert_allclose(tau, pin.rnea(pmodel, pdata, q, qd, qdd), rtol=0, atol=1e-10)

        mass = index.take_matrix(full_mass_matrix(model, data))
        crba = pin.crba(pmodel, pdata, q)
        crba = np.triu(crba) + np.triu(crba, 1).T  # Pinocchio fills the upper triangle
        np.testing.assert_allclose(mass, crba, rtol=0, atol=1e-10)


def test_total_mass_is_kept_including_fixed_joint_links(robot_urdf):
    # The panda's hand and fingers hang on fixed/prismatic joints; nothing may be dropped.
    urdf = robot_urdf("panda_description/urdf/panda.urdf")
    pmodel = _pin_model(urdf)
    model = build_mujoco_model(urdf)
    assert model.body_mass.sum() == pytest.approx(sum(i.mass for i in pmodel.inertias), abs=1e-12)


def test_gravity_matches_the_urdf_convention(robot_urdf):
    model = build_mujoco_model(robot_urdf("ur_description/urdf/ur5_robot.urdf"))
    np.testing.assert_array_equal(model.opt.gravity, [0.0, 0.0, -9.81])


def test_urdf_damping_and_friction_are_switchable(robot_urdf):
    # panda.urdf's joints carry <dynamics damping="0.003" friction="0.0" .../>
    urdf = robot_urdf("panda_description/urdf/panda.urdf")
    names = _joint_names(_pin_model(urdf))
    damped = build_mujoco_model(urdf, joint_damping=True)
    rigid = build_mujoco_model(urdf, joint_damping=False)
    damped_index = joint_index(damped, names)
    assert np.all(rigid.dof_damping == 0) and np.all(rigid.dof_frictionloss == 0)
    assert damped.dof_damping[damped_index.dof_adr].max() > 0


TWO_LINK = """<robot name="two_link">
  <link name="base"><inertial><mass value="1"/>
    <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.1 0 0" rpy="0.3 0.2 0.1"/><mass value="2"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.001" ixz="0" iyz="0.002"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="50" velocity="3"/>
    <dynamics damping="0.7" friction="0.3"/></joint>
</robot>"""


def test_urdf_friction_becomes_frictionloss_only_when_asked():
    lossy = build_mujoco_model(TWO_LINK)
    assert lossy.dof_damping[0] == 0.7 and lossy.dof_frictionloss[0] == 0.3
    damping_only = build_mujoco_model(TWO_LINK, joint_friction=False)
    assert damping_only.dof_damping[0] == 0.7 and damping_only.dof_frictionloss[0] == 0.0
    rigid = build_mujoco_model(TWO_LINK, joint_damping=False)
    assert rigid.dof_damping[0] == 0.0 and rigid.dof_frictionloss[0] == 0.0


def test_rotated_inertial_frame_matches_pinocchio():
    # URDF pitfall: <inertial><origin rpy> must rotate the inertia tensor.
    pmodel = _pin_model(TWO_LINK)
    model = build_mujoco_model(TWO_LINK, joint_damping=False)
    data = mujoco.MjData(model)
    for q in (-1.0, 0.2, 1.5):
        data.qpos[0] = q
        np.testing.assert_allclose(
            full_mass_matrix(model, data), pin.crba(pmodel, pmodel.createData(), np.array([q])),
            atol=1e-12,
        )


def test_damping_adds_exactly_damping_times_velocity_to_inverse_dynamics(robot_urdf):
    urdf = robot_urdf("panda_description/urdf/panda.urdf")
    pmodel = _pin_model(urdf)
    pdata = pmodel.createData()
    model = build_mujoco_model(urdf, joint_damping=True, joint_friction=False)
    data = mujoco.MjData(model)
    index = joint_index(model, _joint_names(pmodel))
    damping = model.dof_damping[index.dof_adr]
    for q, qd, qdd in _random_states(pmodel, count=5, seed=2):
        index.set_positions(data, q)
        index.set_velocities(data, qd)
        data.qacc[:] = index.dof_vector(qdd, model.nv)
        mujoco.mj_inverse(model, data)
        expected = pin.rnea(pmodel, pdata, q, qd, qdd) + damping * qd
        np.testing.assert_allclose(index.take_dofs(data.qfrc_inverse), expected, atol=1e-10)


def test_joint_limits_are_kept(robot_urdf):
    urdf = robot_urdf("panda_description/urdf/panda.urdf")
    pmodel = _pin_model(urdf)
    model = build_mujoco_model(urdf)
    index = joint_index(model, _joint_names(pmodel))
    joint_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in index.names]
    ranges = model.jnt_range[joint_ids]
    np.testing.assert_allclose(ranges[:, 0], pmodel.lowerPositionLimit, atol=1e-12)
    np.testing.assert_allclose(ranges[:, 1], pmodel.upperPositionLimit, atol=1e-12)
    assert all(model.jnt_limited[joint_ids])
    unlimited = build_mujoco_model(urdf, joint_limits=False)
    assert not any(unlimited.jnt_limited)


def test_meshes_that_do_not_exist_are_not_needed(robot_urdf):
    # example-robot-data's URDFs reference package:// meshes that MuJoCo cannot resolve.
    urdf = robot_urdf("ur_description/urdf/ur5_robot.urdf")
    assert "package://" in urdf
    model = build_mujoco_model(urdf)
    assert model.ngeom == 0 and model.nmesh == 0


def test_payload_adds_mass_the_urdf_does_not_have(robot_urdf):
    urdf = robot_urdf("ur_description/urdf/ur5_robot.urdf")
    plain = build_mujoco_model(urdf)
    loaded = build_mujoco_model(urdf, payloads=[Payload("wrist_3_link", 1.0, com=(0, 0, 0.05))])
    assert loaded.body_mass.sum() == pytest.approx(plain.body_mass.sum() + 1.0)
    with pytest.raises(KeyError, match="no_such_link"):
        build_mujoco_model(urdf, payloads=[Payload("no_such_link", 1.0)])


def test_joint_index_rejects_unknown_names(robot_urdf):
    model = build_mujoco_model(robot_urdf("z1_description/urdf/z1.urdf"))
    with pytest.raises(KeyError, match="not_a_joint"):
        joint_index(model, ["not_a_joint"])


ARM = ("<robot name='x'><link name='a'/><link name='b'>{inertial}</link>"
       "<joint name='j' type='{type}'><parent link='a'/><child link='b'/>{extra}"
       "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint></robot>")
BOX = ("<inertial><origin xyz='0.1 0 0'/><mass value='1'/>"
       "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial>")


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("<robot name='x'><link name='a'", "not well-formed"),
        ("<sdf/>", "not <robot>"),
        (ARM.format(inertial=BOX, type="revolute", extra="<dynamics damping='nan'/>"),
         "'j' <damping>"),
        (ARM.format(inertial=BOX, type="revolute", extra="").replace(
            "</robot>", "<link name='c'>" + BOX + "</link><joint name='j' type='revolute'>"
            "<parent link='b'/><child link='c'/><axis xyz='0 1 0'/></joint></robot>"),
         "'j' is defined twice"),
    ],
)
def test_bad_descriptions_raise_the_loaders_model_error(bad, reason):
    with pytest.raises(ModelError, match=reason):
        build_mujoco_model(bad)


def test_a_robot_too_large_for_mujoco_is_refused_quickly_by_count():
    chain = "".join(
        f"<link name='l{k}'>{BOX}</link><joint name='j{k}' type='revolute'><parent "
        f"link='l{k - 1}'/><child link='l{k}'/><axis xyz='0 1 0'/></joint>"
        for k in range(1, 1001))
    with pytest.raises(ModelError, match="1000 moving joints"):
        build_mujoco_model(f"<robot name='long'><link name='l0'/>{chain}</robot>")


def test_a_massless_moving_link_gets_a_bound_mass_and_is_reported():
    plant = build_mujoco_plant(ARM.format(inertial="", type="revolute", extra=""))
    assert any("'b'" in a and "mass 0.0 raised" in a for a in plant.adjustments), plant.adjustments
    assert any("'j'" in w and "no mass" in w for w in plant.warnings), plant.warnings
    body = mujoco.mj_name2id(plant.model, mujoco.mjtObj.mjOBJ_BODY, "b")
    assert 0 < plant.model.body_mass[body] <= 1e-6


def test_a_floating_base_joint_is_welded_like_the_loader_does():
    urdf = ARM.format(inertial=BOX, type="revolute", extra="").replace(
        "<link name='a'/>", "<link name='world'/><link name='a'>" + BOX.replace("0.1 0 0", "0 0 0")
        + "</link><joint name='free' type='floating'><parent link='world'/>"
        "<child link='a'/></joint>")
    plant = build_mujoco_plant(urdf)
    assert plant.model.nv == 1 and joint_index(plant.model).names == ("j",)


@pytest.mark.parametrize("relative", [
    "pr2_description/urdf/pr2.urdf",
    "allegro_hand_description/urdf/allegro_right_hand.urdf",
    "hyq_description/robots/hyq_no_sensors.urdf",
])
def test_inertias_mujoco_refuses_are_balanced_reported_and_gravity_is_unchanged(
        robot_urdf, relative):
    urdf = robot_urdf(relative)
    model = load_urdf(urdf)
    plant = build_mujoco_plant(urdf, joint_damping=False)
    assert plant.warnings == model.warnings
    refused = [w.split("'")[1] for w in model.warnings if "triangle inequality" in w]
    for link in refused:     # every link the loader warned about is reported by name
        assert any(a.startswith(f"link {link!r}") for a in plant.adjustments), link
    for adjustment in plant.adjustments:
        link = adjustment.split("'")[1]
        before, after = (np.array(json.loads(part[:part.index("]") + 1])) for part in
                         adjustment.split("principal moments ")[1].split(" -> "))
        body = mujoco.mj_name2id(plant.model, mujoco.mjtObj.mjOBJ_BODY, link)
        compiled = np.sort(plant.model.body_inertia[body])
        np.testing.assert_allclose(compiled, after, rtol=1e-9, err_msg=adjustment)
        assert after[0] + after[1] >= after[2] and np.all(after > 0), adjustment
        assert after[2] == pytest.approx(max(before[2], 1e-12)), "the largest moment is kept"
    # mass and centre of mass are untouched, so gravity torques are exactly the URDF's
    data = mujoco.MjData(plant.model)
    index = joint_index(plant.model, model.joint_names)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-0.5, 0.5, model.nq)
        q = np.clip(q, model.position_limits[:, 0], model.position_limits[:, 1])
        index.set_positions(data, q)
        data.qvel[:] = 0.0
        mujoco.mj_forward(plant.model, data)
        np.testing.assert_allclose(index.take_dofs(data.qfrc_bias), gravity(model, q),
                                   rtol=1e-9, atol=1e-9)


def test_sim_package_imports_without_rclpy():
    code = "import sys, rbd_control.sim; assert 'rclpy' not in sys.modules, 'rclpy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
