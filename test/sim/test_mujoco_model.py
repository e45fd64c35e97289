"""The MuJoCo plant must have exactly the URDF's rigid-body dynamics.

Pinocchio is the independent oracle: with joint losses off, MuJoCo's inverse dynamics
and mass matrix must equal Pinocchio's RNEA and CRBA for the same joint names.
"""
from __future__ import annotations

import subprocess
import sys

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from rbd_control.sim import Payload, build_mujoco_model, joint_index
from rbd_control.sim.mujoco_model import full_mass_matrix

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
    urdf = robot_urdf("panda_description/urdf/panda.urdf")  # <dynamics damping="1" friction="0"/>...
    names = _joint_names(_pin_model(urdf))
    damped = build_mujoco_model(urdf, joint_damping=True)
    rigid = build_mujoco_model(urdf, joint_damping=False)
    damped_index = joint_index(damped, names)
    assert np.all(rigid.dof_damping == 0) and np.all(rigid.dof_frictionloss == 0)
    assert damped.dof_damping[damped_index.dof_adr].max() > 0


TWO_LINK = """<robot name="two_link">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.1 0 0" rpy="0.3 0.2 0.1"/><mass value="2"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.001" ixz="0" iyz="0.002"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/><dynamics damping="0.7" friction="0.3"/></joint>
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


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("<robot name='x'><link name='a'", "not valid XML"),
        ("<sdf/>", "expected <robot>"),
        (
            # a moving joint whose child link has no inertial: MuJoCo refuses a massless body
            "<robot name='x'><link name='a'/><link name='b'/>"
            "<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
            "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint></robot>",
            "MuJoCo cannot",
        ),
    ],
)
def test_bad_descriptions_raise_value_error_with_a_reason(bad, reason):
    with pytest.raises(ValueError, match=reason):
        build_mujoco_model(bad)


def test_sim_package_imports_without_rclpy():
    code = "import sys, rbd_control.sim; assert 'rclpy' not in sys.modules, 'rclpy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
