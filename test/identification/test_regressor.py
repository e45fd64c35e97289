"""The regressor against our rnea (to 1e-10) and against Pinocchio's computeJointTorqueRegressor,
on a sample of example-robot-data robots: serial arms, branched trees, prismatic and continuous
joints, links merged through fixed joints."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from rbd_control.dynamics import InputError, load_urdf, rnea
from rbd_control.dynamics.regressor import regressor, regressor_batch

from ident_support import oracles

import pinocchio as pin  # noqa: E402  (a required test dependency: missing = failure)

SAMPLE = (
    "ur_description/urdf/ur5_robot.urdf",                               # serial arm
    "panda_description/urdf/panda.urdf",                                # fixed flange + hand
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf",  # continuous joints
    "baxter_description/urdf/baxter.urdf",                              # branched, point masses
    "tiago_description/robots/tiago.urdf",                              # prismatic torso
    "solo_description/robots/solo12.urdf",                              # four legs
    "finger_edu_description/robots/finger_edu.urdf",                    # thin-rod inertias
)
STATES = 5


@functools.lru_cache(maxsize=None)
def load(relative):
    xml = oracles.read_robot(relative)
    model = load_urdf(xml)
    return model, oracles.PinocchioOracle(model, xml)


@pytest.fixture(params=SAMPLE)
def robot(request):
    model, oracle = load(request.param)
    return model, oracle, np.random.default_rng(sum(map(ord, request.param)))


def random_parameters(model, rng):
    """A physically consistent pi unlike the URDF's: every body scaled and shifted."""
    pi = model.inertial_parameters().reshape(model.nq, 10)
    return (pi * rng.uniform(0.5, 1.5, size=(model.nq, 1))).reshape(-1)


def test_regressor_times_parameters_is_rnea(robot):
    model, _, rng = robot
    other = model.with_inertial_parameters(random_parameters(model, rng))
    for k in range(STATES):
        q, qd, qdd = oracles.random_state(model, rng)
        Y = regressor(model, q, qd, qdd)
        assert Y.shape == (model.nq, 10 * model.nq)
        for m in (model, other):     # Y is the same for any inertias
            oracles.assert_close(Y @ m.inertial_parameters(), rnea(m, q, qd, qdd),
                                 f"Y pi vs rnea, state {k}", rtol=1e-10)


def test_parameters_are_pinocchios_dynamic_parameters(robot):
    """Our body frame is Pinocchio's joint frame: the per-body parameters coincide."""
    model, oracle, _ = robot
    theirs = np.concatenate([oracle.pmodel.inertias[j].toDynamicParameters()
                             for j in oracle.joint_id])
    oracles.assert_close(model.inertial_parameters(), theirs, "pi vs Pinocchio", rtol=1e-12)


def pinocchio_regressor(oracle, q, qd, qdd):
    """computeJointTorqueRegressor in our joint order: rows by idx_v, 10-column blocks by
    joint id (block j-1 belongs to Pinocchio's joint j)."""
    Y = pin.computeJointTorqueRegressor(oracle.pmodel, oracle.pdata, oracle.q(q), oracle.v(qd),
                                        oracle.v(qdd))
    columns = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in oracle.joint_id])
    return Y[np.ix_(oracle.idx_v, columns)]


def test_regressor_matches_pinocchio(robot):
    model, oracle, rng = robot
    for k in range(STATES):
        q, qd, qdd = oracles.random_state(model, rng)
        oracles.assert_close(regressor(model, q, qd, qdd), pinocchio_regressor(oracle, q, qd, qdd),
                             f"Y vs Pinocchio, state {k}")


def test_batch_is_the_single_state_regressor(robot):
    model, _, rng = robot
    Q, QD, QDD = (np.array(x) for x in zip(*(oracles.random_state(model, rng) for _ in range(4))))
    Y = regressor_batch(model, Q, QD, QDD)
    for k in range(4):
        np.testing.assert_array_equal(Y[k], regressor(model, Q[k], QD[k], QDD[k]))


def test_with_inertial_parameters_round_trips_and_rejects_bad_input():
    model, _ = load(SAMPLE[0])
    pi = model.inertial_parameters()
    np.testing.assert_array_equal(model.with_inertial_parameters(pi).bodies, model.bodies)
    with pytest.raises(InputError, match="60 finite numbers"):
        model.with_inertial_parameters(pi[:-1])
    bad = pi.copy()
    bad[3] = np.nan
    with pytest.raises(InputError, match="finite"):
        model.with_inertial_parameters(bad)
    with pytest.raises(InputError, match="qd"):
        regressor(model, np.zeros(6), np.zeros(5), np.zeros(6))
    with pytest.raises(InputError, match="qdd contains NaN"):
        regressor_batch(model, np.zeros((2, 6)), np.zeros((2, 6)), np.full((2, 6), np.inf))
