"""Properties every correct rigid-body dynamics must have, on random URDF trees (hypothesis).

Each example is a random tree (random_urdf_trees.trees) and a seed for the random state, so a
failure shrinks to a small tree and prints both.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rbd_control.dynamics import (
    bias,
    coriolis_matrix,
    crba,
    crba_batch,
    forward_dynamics,
    gravity,
    gravity_batch,
    joint_forces,
    load_urdf,
    rnea,
    rnea_batch,
)
from rbd_control.dynamics.closed_form import closed_form_rnea, closed_form_terms, kinetic_energy

from dynamics_oracles import PinocchioOracle, assert_close, random_state, random_wrenches
from random_urdf_trees import PROPERTY_SETTINGS, to_urdf, trees

SEEDS = st.integers(0, 2**32 - 1)


def model_and_state(tree, seed):
    model = load_urdf(to_urdf(tree))
    rng = np.random.default_rng(seed)
    return model, rng, *random_state(model, rng)


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_mass_matrix_is_symmetric_positive_definite(tree, seed):
    model, _, q, _, _ = model_and_state(tree, seed)
    H = crba(model, q)
    assert np.array_equal(H, H.T), "H is not exactly symmetric"
    smallest = np.linalg.eigvalsh(H)[0]
    assert smallest > 1e-12 * np.abs(H).max(), f"H is not positive definite: eigenvalue {smallest}"


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_forward_dynamics_inverts_inverse_dynamics(tree, seed):
    model, rng, q, qd, _ = model_and_state(tree, seed)
    tau = rng.normal(size=model.nq) * 10.0
    for f_ext in (None, random_wrenches(model, rng)):
        qdd = forward_dynamics(model, q, qd, tau, f_ext)
        # the round trip loses about cond(H) digits; the random trees stay well below 1e5
        assert_close(rnea(model, q, qd, qdd, f_ext), tau, f"rnea(forward_dynamics(tau)), "
                     f"f_ext={f_ext is not None}", rtol=1e-8)


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_hdot_minus_twice_coriolis_is_skew_symmetric(tree, seed):
    model, _, q, qd, _ = model_and_state(tree, seed)
    h = 1e-6   # central difference: truncation ~h^2, rounding ~1e-16/h, both far below 1e-6
    H_dot = (crba(model, q + h * qd) - crba(model, q - h * qd)) / (2 * h)
    C = coriolis_matrix(model, q, qd)
    N = H_dot - 2 * C
    scale = max(np.abs(H_dot).max(), np.abs(C).max(), 1.0)
    assert np.abs(N + N.T).max() <= 1e-6 * scale, f"Hdot - 2C is not skew:\n{N + N.T}"
    assert_close(C @ qd, bias(model, q, qd) - gravity(model, q), "C qd = bias - G")


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_rnea_and_crba_equal_the_closed_form(tree, seed):
    model, rng, q, qd, qdd = model_and_state(tree, seed)
    H, c, G = closed_form_terms(model, q, qd)
    assert_close(crba(model, q), H, "crba vs closed-form H", rtol=1e-10)
    assert_close(gravity(model, q), G, "gravity vs closed-form G", rtol=1e-10)
    assert_close(bias(model, q, qd), c + G, "bias vs closed-form C qd + G", rtol=1e-10)
    f_ext = random_wrenches(model, rng)
    assert_close(rnea(model, q, qd, qdd, f_ext), closed_form_rnea(model, q, qd, qdd, f_ext),
                 "rnea vs closed form, with f_ext", rtol=1e-10)


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_power_balance(tree, seed):
    """Along the motion that tau produces, dT/dt = qd^T (tau - G): gravity's work aside, all
    power goes into kinetic energy (C qd does no work since Hdot - 2C is skew)."""
    model, rng, q, qd, _ = model_and_state(tree, seed)
    tau = rng.normal(size=model.nq) * 10.0
    qdd = forward_dynamics(model, q, qd, tau)

    def energy(t):     # T along q(t) = q + t qd + t^2/2 qdd, by the closed form (eq. 7)
        return kinetic_energy(model, q + t * qd + 0.5 * t * t * qdd, qd + t * qdd)

    h = 1e-5
    energy_rate = (energy(h) - energy(-h)) / (2 * h)
    power = qd @ (tau - gravity(model, q))
    scale = max(np.abs(qd * tau).sum(), np.abs(qd * gravity(model, q)).sum(), 1.0)
    assert abs(energy_rate - power) <= 1e-6 * scale, (energy_rate, power)
    # and the same with the CRBA's T = 1/2 qd^T H qd at t = 0
    assert abs(0.5 * qd @ crba(model, q) @ qd - energy(0.0)) <= 1e-10 * max(energy(0.0), 1.0)


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_gravity_recursion_equals_rnea_at_rest(tree, seed):
    model, _, q, _, _ = model_and_state(tree, seed)
    zero = np.zeros(model.nq)
    assert_close(gravity(model, q), rnea(model, q, zero, zero), "gravity vs rnea(q, 0, 0)",
                 rtol=1e-12)


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS, count=st.integers(1, 5))
def test_batched_forms_equal_single_calls(tree, seed, count):
    model, rng, *_ = model_and_state(tree, seed)
    Q, QD, QDD = (np.array(x) for x in zip(*(random_state(model, rng) for _ in range(count))))
    TAU, G, H = rnea_batch(model, Q, QD, QDD), gravity_batch(model, Q), crba_batch(model, Q)
    assert TAU.shape == G.shape == (count, model.nq) and H.shape == (count, model.nq, model.nq)
    for k in range(count):
        assert np.array_equal(TAU[k], rnea(model, Q[k], QD[k], QDD[k])), f"rnea_batch row {k}"
        assert np.array_equal(G[k], gravity(model, Q[k])), f"gravity_batch row {k}"
        assert np.array_equal(H[k], crba(model, Q[k])), f"crba_batch row {k}"


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_joint_forces_project_onto_the_axes_as_tau(tree, seed):
    """tau_i = S_i^T f_i: the moment (revolute) or force (prismatic) along the joint axis, in
    the child link's frame where the URDF states the axis."""
    model, rng, q, qd, qdd = model_and_state(tree, seed)
    f_ext = random_wrenches(model, rng)
    forces = joint_forces(model, q, qd, qdd, f_ext)
    assert forces.shape == (model.nq, 6)
    axes = tree.joint_axes()
    kinds = {f"{link.name}_joint": link.joint for link in tree.moving()}
    projected = [axes[name] @ (forces[i, 3:] if kinds[name] == "prismatic" else forces[i, :3])
                 for i, name in enumerate(model.joint_names)]
    assert_close(projected, rnea(model, q, qd, qdd, f_ext), "S^T f vs tau", rtol=1e-12)


@PROPERTY_SETTINGS
@given(tree=trees(), seed=SEEDS)
def test_random_trees_match_pinocchio(tree, seed):
    """Fixed joints with heavy children, rotated inertials and non-unit axes, against an
    independent loader and algorithm."""
    xml = to_urdf(tree)
    model, rng, q, qd, qdd = model_and_state(tree, seed)
    oracle = PinocchioOracle(model, xml)
    f_ext = random_wrenches(model, rng)
    assert_close(rnea(model, q, qd, qdd, f_ext), oracle.rnea(q, qd, qdd, f_ext), "tau, f_ext")
    assert_close(crba(model, q), oracle.crba(q), "H")
    assert_close(forward_dynamics(model, q, qd, qdd), oracle.forward_dynamics(q, qd, qdd),
                 "qdd", rtol=1e-8)
