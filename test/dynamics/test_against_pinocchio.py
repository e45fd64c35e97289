"""Every URDF of example-robot-data against Pinocchio, 20 random states each, on the inertias
as written (triangle-inequality breaks and massless subtrees included).

Only the empty URDF and those without a moving joint are refused (skipped with the loader's
reason; test_every_robot_with_a_moving_joint_is_compared pins that down); the rest must agree to
1e-9 relative in tau (with and without external forces), H, G, C qd and qdd. Where H is singular
(massless moving subtrees), forward dynamics must refuse by naming the joint instead.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from rbd_control.dynamics import (InputError, ModelError, bias, coriolis_matrix, crba,
                                  forward_dynamics, gravity, load_urdf, momentum_observer_step,
                                  momentum_terms, rnea)
from rbd_control.dynamics.closed_form import closed_form_rnea
from rbd_control.dynamics.urdf_checks import singular_joints

from dynamics_oracles import (PinocchioOracle, assert_close, example_robot_urdfs, random_state,
                              random_wrenches, read_robot)

import pinocchio as pin  # noqa: E402  (a required test dependency: missing = failure)

STATES_PER_ROBOT = 20
ROBOTS = example_robot_urdfs()


@functools.lru_cache(maxsize=None)
def load(relative):
    """(model, oracle) or the reason the robot is not compared; each URDF is parsed once."""
    xml = read_robot(relative)
    try:
        model = load_urdf(xml)
    except ModelError as error:
        return None, f"our loader refuses it: {error}"
    return model, PinocchioOracle(model, xml)


def compared_robots():
    return [relative for relative in ROBOTS if load(relative)[0] is not None]


def is_branched(model):
    """Some link (the fixed base included) carries two or more moving subtrees."""
    return np.bincount(model.parent + 1).max() >= 2


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    model, oracle = load(request.param)
    if model is None:
        pytest.skip(f"{request.param}: {oracle}")
    # one seed per robot, stable across runs and independent of the test order
    seed = sum(map(ord, request.param))
    return model, oracle, np.random.default_rng(seed)


def states(model, rng):
    return [random_state(model, rng) for _ in range(STATES_PER_ROBOT)]


def test_inverse_dynamics_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, (q, qd, qdd) in enumerate(states(model, rng)):
        assert_close(rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd), f"tau, state {k}")


def test_inverse_dynamics_with_external_forces_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, (q, qd, qdd) in enumerate(states(model, rng)):
        f_ext = random_wrenches(model, rng)
        assert_close(rnea(model, q, qd, qdd, f_ext), oracle.rnea(q, qd, qdd, f_ext),
                     f"tau with f_ext on {sorted(f_ext)}, state {k}")


def test_mass_matrix_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, (q, _, _) in enumerate(states(model, rng)):
        assert_close(crba(model, q), oracle.crba(q), f"H, state {k}")


def test_gravity_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, (q, _, _) in enumerate(states(model, rng)):
        assert_close(gravity(model, q), oracle.gravity(q), f"G, state {k}")


def test_velocity_product_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, (q, qd, _) in enumerate(states(model, rng)):
        reference = oracle.velocity_product(q, qd)
        assert_close(bias(model, q, qd) - gravity(model, q), reference, f"bias - G, state {k}")
        assert_close(coriolis_matrix(model, q, qd) @ qd, reference, f"C(q, qd) qd, state {k}")


def test_coriolis_matrix_equals_pinocchios_factorisation(robot):
    """Stricter than the contract (C is not unique: any C with C qd = bias - G and Hdot - 2C
    skew would do), but ours and Pinocchio's computeCoriolisMatrix use the same body-level
    factorisation, so all n^2 entries can be checked, not only their product with qd."""
    model, oracle, rng = robot
    for k, (q, qd, _) in enumerate(states(model, rng)[:5]):
        reference = oracle.ours(pin.computeCoriolisMatrix(oracle.pmodel, oracle.pdata,
                                                          oracle.q(q), oracle.v(qd)))
        assert_close(coriolis_matrix(model, q, qd), reference, f"C(q, qd), state {k}")


def test_momentum_terms_match_pinocchio(robot):
    """p = H qd, C^T qd (from computeCoriolisMatrix: C^T qd = Hdot qd - C qd is the same for
    every C with Hdot = C + C^T) and G, from the one O(n) pass of momentum.py."""
    model, oracle, rng = robot
    out = np.empty((3, model.nq))
    for k, (q, qd, _) in enumerate(states(model, rng)[:5]):
        C = oracle.ours(pin.computeCoriolisMatrix(oracle.pmodel, oracle.pdata, oracle.q(q),
                                                  oracle.v(qd)))
        assert momentum_terms(model, q, qd, out=out) is out
        assert_close(out[0], oracle.crba(q) @ qd, f"p = H qd, state {k}")
        assert_close(out[1], C.T @ qd, f"C^T qd, state {k}")
        assert_close(out[2], oracle.gravity(q), f"G, state {k}")


def test_momentum_observer_step_is_its_equation_on_pinocchios_terms(robot):
    """s = (s + (tau + C^T qd - g) dt + K dt p) / (1 + K dt), r = K (p - s), in place."""
    model, oracle, rng = robot
    gain, dt = 80.0, 1e-3
    s, r, terms = rng.normal(size=model.nq), np.zeros(model.nq), np.empty((3, model.nq))
    for k, (q, qd, tau) in enumerate(states(model, rng)[:3]):
        C = oracle.ours(pin.computeCoriolisMatrix(oracle.pmodel, oracle.pdata, oracle.q(q),
                                                  oracle.v(qd)))
        p = oracle.crba(q) @ qd
        s_ref = (s + (tau + C.T @ qd - oracle.gravity(q)) * dt + gain * dt * p) / (1 + gain * dt)
        assert momentum_observer_step(model, q, qd, tau, gain, dt, s, r, terms) is r
        assert_close(s, s_ref, f"s, state {k}")
        assert_close(r, gain * (p - s_ref), f"r, state {k}")


def test_forward_dynamics_matches_pinocchio(robot):
    """Where H(q) is singular (a massless moving subtree, masses on an axis: the loader warns
    about H at the zero pose), ours refuses by naming such a joint; where such a robot's H(q) is
    regular but ill-conditioned, Pinocchio's inverse dynamics of our qdd gives back tau."""
    model, oracle, rng = robot
    singular = [model.joint_names[i] for i in singular_joints(model)]
    for k, (q, qd, qdd) in enumerate(states(model, rng)):
        tau = oracle.rnea(q, qd, qdd)      # torques of a plausible size for this robot
        f_ext = random_wrenches(model, rng) if k % 2 else None
        try:
            qdd_ours = forward_dynamics(model, q, qd, tau, f_ext)
        except InputError as error:
            assert singular and "singular" in str(error), error
            assert any(f"'{name}'" in str(error) for name in singular), (error, singular)
            continue
        what = f"qdd{' with f_ext' if f_ext else ''}, state {k}"
        if singular:   # H(q) regular here but ill-conditioned: check the residual H qdd + C - tau
            assert_close(oracle.rnea(q, qd, qdd_ours, f_ext), tau, f"residual of {what}")
        else:
            assert_close(qdd_ours, oracle.forward_dynamics(q, qd, tau, f_ext), what)


def test_closed_form_matches_pinocchio(robot):
    """The closed form (Zhang 2000) against Pinocchio directly, on fewer states (it is slow)."""
    model, oracle, rng = robot
    for k, (q, qd, qdd) in enumerate(states(model, rng)[:3]):
        f_ext = random_wrenches(model, rng)
        assert_close(closed_form_rnea(model, q, qd, qdd, f_ext),
                     oracle.rnea(q, qd, qdd, f_ext), f"closed-form tau, state {k}")


REFUSABLE = ("URDF has no <link> elements", "has no moving joint")


def test_every_robot_with_a_moving_joint_is_compared():
    refused = {r: load(r)[1] for r in ROBOTS if load(r)[0] is None}
    unexpected = {r: why for r, why in refused.items() if not any(s in why for s in REFUSABLE)}
    assert not unexpected, \
        f"refused for another reason than no links / no moving joint: {unexpected}"
    compared = compared_robots()
    assert len(compared) == len(ROBOTS) - len(refused) >= 66, (len(compared), len(ROBOTS))
    assert any(is_branched(load(r)[0]) for r in compared), "no branched robot compared"
    assert any(load(r)[0].warnings for r in compared), "no robot with load warnings compared"


def test_strict_loading_refuses_pr2_naming_the_link_and_the_reason():
    with pytest.raises(ModelError, match=r"strict mode: link 'sensor_mount_link'.*triangle"):
        load_urdf(read_robot("pr2_description/urdf/pr2.urdf"), strict=True)
