"""MuJoCo as a second, independent oracle: mj_inverse against rnea, mj_fullM against crba.

The MuJoCo plant comes from rbd_control.sim.mujoco_model.build_mujoco_model with joint losses
and limits off, so it holds exactly the URDF's rigid bodies; joints are matched by name.
"""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.dynamics import crba, load_urdf, rnea

from dynamics_oracles import assert_close, random_state, read_robot

# The oracles are required test dependencies (requirements/test.txt): a missing one fails.
import mujoco  # noqa: E402

import rbd_control.sim.mujoco_model as mujoco_model  # noqa: E402

ROBOTS = [
    "panda_description/urdf/panda.urdf",                 # arm, fixed hand, prismatic fingers
    "solo_description/robots/solo12.urdf",              # a tree: four legs on one base
    "tiago_pro_description/robots/tiago_pro.urdf",      # 33 DoF, two arms on a prismatic torso
]


@pytest.fixture(scope="module", params=ROBOTS)
def plant(request):
    xml = read_robot(request.param)
    model = load_urdf(xml)
    mj = mujoco_model.build_mujoco_model(xml, joint_damping=False, joint_limits=False)
    index = mujoco_model.joint_index(mj, model.joint_names)
    assert mj.nv == model.nq, "MuJoCo and we disagree on the number of joints"
    return model, mj, mujoco.MjData(mj), index, np.random.default_rng(7)


def test_inverse_dynamics_matches_mujoco(plant):
    model, mj, data, index, rng = plant
    for k in range(20):
        q, qd, qdd = random_state(model, rng)
        index.set_positions(data, q)
        index.set_velocities(data, qd)
        data.qacc[:] = index.dof_vector(qdd, mj.nv)
        mujoco.mj_inverse(mj, data)
        assert_close(rnea(model, q, qd, qdd), index.take_dofs(data.qfrc_inverse),
                     f"tau vs mj_inverse, state {k}")


def test_mass_matrix_matches_mujoco(plant):
    model, mj, data, index, rng = plant
    for k in range(20):
        q, _, _ = random_state(model, rng)
        index.set_positions(data, q)
        H = index.take_matrix(mujoco_model.full_mass_matrix(mj, data))
        assert_close(crba(model, q), H, f"H vs mj_fullM, state {k}")
