"""Task-space kinematics and Lambda against Pinocchio on every example-robot-data robot we load.

frame_pose, frame_jacobian (also at an offset point), frame_velocity and frame_bias_acceleration
must agree to 1e-9 relative at random states and random links (fixed-joint links included);
Lambda = (J M^-1 J^T)^-1 is compared with Pinocchio's M at states where J M^-1 J^T is well
conditioned. Our Jacobian rows are [omega; v]; Pinocchio's are [v; omega].
"""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.dynamics import (FrameJacobian, InputError, frame_bias_acceleration,
                                  frame_jacobian, frame_pose,
                                  frame_pose_batch, frame_velocity, frame_wrench, load_urdf,
                                  operational_space_inertia)

from dynamics_oracles import assert_close, example_robot_urdfs, random_state, read_robot
from test_against_pinocchio import load

import pinocchio as pin  # noqa: E402  (a required test dependency: missing = failure)

STATES_PER_ROBOT = 10
LINKS_PER_STATE = 4
ROBOTS = example_robot_urdfs()
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    model, oracle = load(request.param)
    if model is None:
        pytest.skip(f"{request.param}: {oracle}")
    seed = sum(map(ord, request.param)) + 14
    return model, oracle, np.random.default_rng(seed)


def samples(model, rng):
    """(q, qd, link) with random states and random links, always including the last link."""
    links = list(model.link_names)
    for k in range(STATES_PER_ROBOT):
        q, qd, _ = random_state(model, rng)
        chosen = set(rng.choice(links, size=min(LINKS_PER_STATE, len(links)), replace=False))
        chosen.add(links[-1])
        for link in sorted(chosen):
            yield k, q, qd, str(link)


def pin_frame(oracle, link):
    return oracle.pmodel.getFrameId(link, pin.FrameType.BODY)


def pin_jacobian(oracle, q, link):
    """Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobian as [omega; v] in our column order."""
    J = pin.computeFrameJacobian(oracle.pmodel, oracle.pdata, oracle.q(q),
                                 pin_frame(oracle, link), LWA)
    return np.vstack([J[3:], J[:3]])[:, oracle.idx_v]


def test_frame_pose_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, q, _, link in samples(model, rng):
        pin.framesForwardKinematics(oracle.pmodel, oracle.pdata, oracle.q(q))
        reference = oracle.pdata.oMf[pin_frame(oracle, link)].homogeneous
        assert_close(frame_pose(model, q, link), reference, f"pose of {link}, state {k}")


def test_frame_jacobian_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, q, _, link in samples(model, rng):
        assert_close(frame_jacobian(model, q, link), pin_jacobian(oracle, q, link),
                     f"J of {link}, state {k}")


def test_jacobian_at_a_point_matches_shifted_pinocchio_jacobian(robot):
    model, oracle, rng = robot
    for k, q, _, link in samples(model, rng):
        point = rng.normal(size=3) * 0.2
        J = pin_jacobian(oracle, q, link)
        offset = frame_pose(model, q, link)[:3, :3] @ point        # world axes
        # v_point = v - (R c) x omega  =  v + omega x (R c)
        J[3:] -= pin.skew(offset) @ J[:3]
        assert_close(frame_jacobian(model, q, link, point), J,
                     f"J at {point} of {link}, state {k}")


def test_frame_velocity_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, q, qd, link in samples(model, rng):
        pin.forwardKinematics(oracle.pmodel, oracle.pdata, oracle.q(q), oracle.v(qd))
        v = pin.getFrameVelocity(oracle.pmodel, oracle.pdata, pin_frame(oracle, link), LWA)
        assert_close(frame_velocity(model, q, qd, link), np.hstack([v.angular, v.linear]),
                     f"velocity of {link}, state {k}")


def test_frame_bias_acceleration_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k, q, qd, link in samples(model, rng):
        pin.forwardKinematics(oracle.pmodel, oracle.pdata, oracle.q(q), oracle.v(qd),
                              np.zeros(oracle.pmodel.nv))
        a = pin.getFrameClassicalAcceleration(oracle.pmodel, oracle.pdata, pin_frame(oracle, link),
                                              LWA)
        assert_close(frame_bias_acceleration(model, q, qd, link), np.hstack([a.angular, a.linear]),
                     f"Jdot qd of {link}, state {k}")


def joints_moving(model, link):
    """How many joints lie between the base and the link."""
    count, j = 0, model.link_body[link]
    while j >= 0:
        count, j = count + 1, model.parent[j]
    return count


def test_operational_space_inertia_matches_pinocchio_at_regular_states(robot):
    model, oracle, rng = robot
    if max(joints_moving(model, link) for link in model.link_names) < 6:
        pytest.skip(f"{model.name}: no link has 6 joints below it, so J M^-1 J^T is singular "
                    "everywhere (Lambda exists only damped)")
    compared = singular_H = 0
    for k, q, _, link in samples(model, rng):
        if joints_moving(model, link) < 6:
            continue
        J = pin_jacobian(oracle, q, link)
        M = oracle.crba(q)
        cond_M = np.linalg.cond(M)
        if cond_M > 1e12:   # massless joints: H is singular here, Lambda undefined
            singular_H += 1
            continue
        A = J @ np.linalg.solve(M, J.T)
        if np.linalg.cond(A) > 1e5:   # near a singularity of this link: Lambda is damped
            continue
        ours = operational_space_inertia(model, q, link)
        assert ours.damping == 0.0
        assert_close(ours.Lambda, np.linalg.inv(A), f"Lambda of {link}, state {k}", rtol=1e-8)
        # solving with H loses up to cond(H) digits in either implementation
        assert_close(ours.Hinv_JT, np.linalg.solve(M, J.T), f"H^-1 J^T of {link}, state {k}",
                     rtol=max(1e-9, 1e-14 * cond_M))
        compared += 1
    if compared == 0 and singular_H > 0:
        pytest.skip(f"{model.name}: H(q) is singular (massless joints) wherever J has rank 6")
    assert compared > 0, "no regular state drawn"


def test_enough_robots_are_compared():
    compared = [r for r in ROBOTS if load(r)[0] is not None]
    assert len(compared) >= 10, compared


# --- properties and input handling on panda -------------------------------------------------

@pytest.fixture(scope="module")
def panda():
    return load_urdf(read_robot("panda_description/urdf/panda.urdf"))


def test_batch_forward_kinematics_equals_single_calls(panda):
    rng = np.random.default_rng(0)
    Q = np.array([random_state(panda, rng)[0] for _ in range(50)])
    T = frame_pose_batch(panda, Q, "panda_hand_tcp")
    assert T.shape == (50, 4, 4)
    for q, pose in zip(Q, T):
        np.testing.assert_array_equal(pose, frame_pose(panda, q, "panda_hand_tcp"))


def test_lambda_is_damped_and_finite_at_a_singularity(panda):
    q = np.zeros(panda.nq)   # panda at zero: elbow stretched, joints 1, 3, 5 aligned
    result = operational_space_inertia(panda, q, "panda_hand_tcp")
    assert result.damping > 0.0
    assert np.all(np.isfinite(result.Lambda))
    assert np.allclose(result.Lambda, result.Lambda.T)
    assert np.linalg.eigvalsh(result.Lambda).min() >= 0.0
    # the damping mu caps the largest eigenvalue: Lambda = (A + mu 1)^-1 <= 1 / mu
    assert np.linalg.eigvalsh(result.Lambda).max() <= 1.0 / result.damping


def test_lambda_is_bounded_and_continuous_where_the_damping_switches_on(panda):
    """Walking into the singularity, Lambda grows, the damping switches on without a jump
    (bisection to the switch), and Lambda stays finite and capped."""
    direction = np.random.default_rng(3).normal(size=panda.nq)

    def at(s):
        return operational_space_inertia(panda, 0.02 * s * direction, "panda_hand_tcp")

    results = [at(s) for s in np.linspace(1.0, 0.0, 101)]
    assert all(np.all(np.isfinite(r.Lambda)) for r in results)
    assert results[0].damping == 0.0 and results[-1].damping > 0.0
    regular, damped = 1.0, 0.0
    for _ in range(50):  # bisect the switch to ~1e-15 in s
        middle = 0.5 * (regular + damped)
        regular, damped = (middle, damped) if at(middle).damping == 0.0 else (regular, middle)
    before, after = at(regular).Lambda, at(damped).Lambda
    assert np.abs(after - before).max() <= 1e-6 * np.abs(before).max()


@pytest.mark.parametrize("call, message", [
    (lambda m: frame_pose(m, np.zeros(m.nq), "no_such_link"), "no_such_link"),
    (lambda m: frame_jacobian(m, np.zeros(m.nq - 1), "panda_hand"), "q must have length"),
    (lambda m: frame_jacobian(m, np.zeros(m.nq), "panda_hand", point=[0, 1]), "point"),
    (lambda m: frame_jacobian(m, np.zeros(m.nq), "panda_hand", point=[0, np.nan, 0]), "point"),
    (lambda m: frame_pose(m, [np.inf] + [0.0] * (m.nq - 1), "panda_hand"), "q contains NaN"),
    (lambda m: frame_bias_acceleration(m, np.zeros(m.nq), [0.0] * 3, "panda_hand"), "qd must"),
    (lambda m: frame_pose_batch(m, np.zeros((3, m.nq + 1)), "panda_hand"), "Q must have shape"),
    (lambda m: operational_space_inertia(m, np.zeros(m.nq), "panda_link0"), "fixed to the base"),
    (lambda m: operational_space_inertia(m, np.zeros(m.nq), "panda_hand", rcond=0.0), "rcond"),
])
def test_bad_input_is_refused_by_name(panda, call, message):
    with pytest.raises(InputError, match=message):
        call(panda)


def test_prepared_frame_jacobian_equals_the_function_in_its_one_buffer(panda):
    rng = np.random.default_rng(3)
    point = rng.normal(size=3)
    at_origin = FrameJacobian(panda, "panda_hand")
    at_point = FrameJacobian(panda, "panda_hand", point)
    for q in rng.uniform(-1, 1, (4, panda.nq)):
        np.testing.assert_array_equal(at_origin(q), frame_jacobian(panda, q, "panda_hand"))
        np.testing.assert_array_equal(at_point(list(q)),
                                      frame_jacobian(panda, q, "panda_hand", point))
        assert at_origin(q) is at_origin.J   # reused, not reallocated


@pytest.mark.parametrize("make, q, message", [
    (lambda m: FrameJacobian(m, "no_such_link"), None, "no_such_link"),
    (lambda m: FrameJacobian(m, "panda_hand", point=[0, 1]), None, "point"),
    (lambda m: FrameJacobian(m, "panda_hand"), lambda m: np.zeros(m.nq - 1), "q must have length"),
    (lambda m: FrameJacobian(m, "panda_hand"), lambda m: np.full(m.nq, np.nan), "q contains NaN"),
    (lambda m: FrameJacobian(m, "panda_hand"), lambda m: np.zeros(m.nq, np.int64) + 1, None),
])
def test_prepared_frame_jacobian_refuses_bad_input_as_the_function_does(panda, make, q, message):
    if message is None:   # an int vector is converted, not read as floats
        np.testing.assert_array_equal(make(panda)(q(panda)),
                                      frame_jacobian(panda, np.ones(panda.nq), "panda_hand"))
        return
    with pytest.raises(InputError, match=message):
        make(panda)(q(panda)) if q else make(panda)


def test_fixed_base_link_has_zero_jacobian_and_its_placement_as_pose(panda):
    q = np.random.default_rng(1).uniform(-1, 1, panda.nq)
    assert not np.any(frame_jacobian(panda, q, "panda_link0"))
    assert not np.any(frame_bias_acceleration(panda, q, np.ones(panda.nq), "panda_link0"))
    np.testing.assert_array_equal(frame_pose(panda, q, "panda_link0"), np.eye(4))


def test_frame_wrench_is_damped_least_squares_on_pinocchios_jacobian(robot):
    """F = (J J^T + lambda^2 1)^-1 J tau with Pinocchio's J; and with a small lambda a wrench
    on the last link of a 6+ joint chain is recovered from tau = J^T F (frame_wrench.py)."""
    model, oracle, rng = robot
    for k, q, _, link in samples(model, rng):
        J = pin_jacobian(oracle, q, link)
        tau = rng.normal(size=model.nq)
        reference = np.linalg.solve(J @ J.T + 0.1 ** 2 * np.eye(6), J @ tau)
        assert_close(frame_wrench(model, q, link, tau, 0.1), reference, f"F at {link}, state {k}")
        if np.linalg.matrix_rank(J) == 6 and np.linalg.cond(J) < 1e3:
            wrench = rng.normal(size=6)
            assert_close(frame_wrench(model, q, link, J.T @ wrench, 1e-6), wrench,
                         f"F recovered at {link}, state {k}", rtol=1e-6)


def test_frame_wrench_refuses_bad_damping_and_tau():
    model = load("panda_description/urdf/panda.urdf")[0]
    q = np.zeros(model.nq)
    for damping in (0.0, -1.0, float("nan"), "x"):
        with pytest.raises(InputError, match="damping"):
            frame_wrench(model, q, model.link_names[-1], q, damping)
    with pytest.raises(InputError, match="tau"):
        frame_wrench(model, q, model.link_names[-1], np.full(model.nq, np.nan), 0.1)
