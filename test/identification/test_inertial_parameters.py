"""Inertial parameters: pseudo-inertia, log-Cholesky, rigid transforms, payloads, URDF export."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from ident_support import oracles
from rbd_control.demo.plant import TRUE_PAYLOAD
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import InputError, load_urdf, rnea
from rbd_control.dynamics.inertial_parameters import (consistency_violations, from_pseudo_inertia,
                                                      from_rigid_body, log_cholesky_to_parameters,
                                                      parameters_to_log_cholesky, pseudo_inertia,
                                                      to_rigid_body)
from rbd_control.identification import with_payload
from rbd_control.identification.result import rewrite_inertials
from rbd_control.sim.mujoco_model import build_mujoco_model, joint_index


def random_body(rng):
    """A consistent body: random mass, centre and a rotated tensor of valid principal moments."""
    a, b = rng.uniform(0.1, 1.0, 2)
    moments = np.array([a, b, rng.uniform(abs(a - b), a + b)]) * 0.01
    R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return from_rigid_body(rng.uniform(0.5, 5.0), rng.normal(size=3) * 0.1,
                           R @ np.diag(moments) @ R.T)


def test_log_cholesky_round_trip_and_every_theta_is_consistent():
    rng = np.random.default_rng(0)
    for _ in range(50):
        pi = random_body(rng)
        theta = parameters_to_log_cholesky(pi, floor=1e-12)
        np.testing.assert_allclose(log_cholesky_to_parameters(theta), pi, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(from_pseudo_inertia(pseudo_inertia(pi)), pi, atol=1e-15)
        theta = rng.normal(size=10) * 2
        pi_theta = log_cholesky_to_parameters(theta)
        assert pi_theta[0] > 0 and consistency_violations(pi_theta, ["body"]) == []
        m, _, I_c = to_rigid_body(pi_theta)
        assert np.linalg.eigvalsh(I_c).min() > 0


def test_inconsistent_bodies_are_named():
    pi = from_rigid_body(1.0, [0.0, 0.0, 0.1], np.diag([0.01, 0.01, 0.05]))  # 0.05 > 0.01 + 0.01
    problems = consistency_violations(pi, ["elbow"])
    assert len(problems) == 1 and "elbow" in problems[0]
    negative = from_rigid_body(-1.0, [0.0, 0.0, 0.0], np.diag([0.01, 0.01, 0.01]))
    assert consistency_violations(negative, ["wrist"])


def test_payload_matches_mujoco_with_the_same_payload():
    """with_payload on tool0 (welded to the flange) against MuJoCo's own payload body: the same
    inverse dynamics at random states."""
    xml = default_arm_urdf()
    p = TRUE_PAYLOAD
    model = with_payload(load_urdf(xml), p.link, p.mass, p.com, p.inertia)
    plant = build_mujoco_model(xml, joint_damping=False, payloads=[p])
    data = mujoco.MjData(plant)
    index = joint_index(plant, model.joint_names)
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd = oracles.random_state(model, rng)
        index.set_positions(data, q)
        index.set_velocities(data, qd)
        data.qacc[:] = index.dof_vector(qdd, plant.nv)
        mujoco.mj_inverse(plant, data)
        oracles.assert_close(rnea(model, q, qd, qdd), index.take_dofs(data.qfrc_inverse),
                             "tau with payload")


def test_payload_mass_zero_is_no_payload_and_bad_payloads_are_refused():
    model = load_urdf(default_arm_urdf())
    same = with_payload(model, "tool0", 0.0)
    np.testing.assert_array_equal(same.inertial_parameters(), model.inertial_parameters())
    with pytest.raises(InputError, match="no_such_link"):
        with_payload(model, "no_such_link", 1.0)
    with pytest.raises(InputError, match="fixed base"):
        with_payload(model, "base_link", 1.0)
    with pytest.raises(InputError, match="mass must be >= 0"):
        with_payload(model, "tool0", -1.0)
    with pytest.raises(InputError, match="not physically consistent"):
        with_payload(model, "tool0", 1.0, inertia=[0.01, 0.01, 0.05])


@pytest.mark.parametrize("robot", [None, "panda_description/urdf/panda.urdf",
                                   "ur_description/urdf/ur5_robot.urdf"])
def test_to_urdf_round_trips_and_keeps_the_kinematics(robot):
    xml = default_arm_urdf() if robot is None else oracles.read_robot(robot)
    model = load_urdf(xml)
    rng = np.random.default_rng(2)
    pi = np.concatenate([random_body(rng) for _ in range(model.nq)])
    written = rewrite_inertials(xml, model.with_inertial_parameters(pi))
    again = load_urdf(written)
    assert again.joint_names == model.joint_names and again.link_names == model.link_names
    np.testing.assert_allclose(again.inertial_parameters(), pi, rtol=1e-8, atol=1e-10)
    rows = [0, 1, 2, 3, 4]      # Xtree (E, r) and the axis
    np.testing.assert_array_equal(again.bodies[:, rows], model.bodies[:, rows])
    np.testing.assert_array_equal(again.position_limits, model.position_limits)
    assert ("<ros2_control" in written) == ("<ros2_control" in xml)
