"""Base parameters, excitation trajectories and the zero-phase differentiation."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.control import JointTrajectory
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import InputError, load_urdf
from rbd_control.identification import base_parameters, excitation_trajectory, regressor_batch
from rbd_control.identification.base import random_states
from rbd_control.identification.filtering import filtered_states, segments


@pytest.fixture(scope="module")
def arm():
    return load_urdf(default_arm_urdf())


def test_base_parameters_carry_all_of_the_torque(arm):
    base = base_parameters(arm)
    assert base.count == 36            # 6R arm: 60 - 24 (Gautier & Khalil 1990's count)
    assert list(base.unidentifiable) == list(range(9))   # all of shoulder_pan's but I_zz
    rng = np.random.default_rng(4)
    Y = regressor_batch(arm, *random_states(arm, rng, 20))
    for _ in range(5):
        pi = rng.normal(size=60)
        np.testing.assert_allclose(Y @ pi, Y[:, :, base.independent] @ base.base(pi),
                                   rtol=1e-9, atol=1e-9)
    assert "shoulder_pan:I_zz" in base.describe()


@pytest.fixture(scope="module")
def excitation(arm):
    return excitation_trajectory(arm, 20.0, iterations=30, velocity_fraction=0.5,
                                 max_acceleration=3.0)


def test_excitation_stays_within_limits_and_starts_and_ends_at_rest(arm, excitation):
    t = np.arange(0.0, excitation.duration, 1e-3)
    q, qd, qdd = excitation.sample(t)
    lower, upper = arm.position_limits.T
    limited = np.isfinite(lower)
    assert np.all(q[:, limited] >= lower[limited]) and np.all(q[:, limited] <= upper[limited])
    assert np.all(np.abs(qd) <= 0.5 * arm.velocity_limit + 1e-9)
    assert np.all(np.abs(qdd) <= 3.0 + 1e-9)
    for end in (0.0, excitation.duration):
        _, qd_end, qdd_end = excitation.sample(end)
        np.testing.assert_allclose(qd_end, 0.0, atol=1e-12)
        np.testing.assert_allclose(qdd_end, 0.0, atol=1e-12)
    assert excitation.duration == 20.0


def test_excitation_is_a_joint_trajectory(arm, excitation):
    trajectory = JointTrajectory.from_arrays(arm.joint_names, *excitation.waypoints(dt=0.05))
    assert isinstance(trajectory, JointTrajectory)
    point = trajectory.points[7]
    q, qd, qdd = excitation.sample(point.time_from_start)
    np.testing.assert_allclose(point.positions, q[0])
    np.testing.assert_allclose(point.velocities, qd[0])
    np.testing.assert_allclose(point.accelerations, qdd[0])


def test_excitation_refuses_impossible_requests(arm):
    with pytest.raises(InputError, match="shorter than one period"):
        excitation_trajectory(arm, 5.0)
    with pytest.raises(InputError, match="harmonics"):
        excitation_trajectory(arm, 20.0, harmonics=1)


def test_filtering_differentiates_without_lag():
    """A 0.7 Hz sine sampled at 1 kHz: the filtered q, qd, qdd are the exact ones."""
    t = np.arange(0.0, 10.0, 1e-3)
    w = 2 * np.pi * 0.7
    q = np.column_stack((np.sin(w * t), 0.5 * np.cos(w * t)))
    tau = 3.0 * q
    tf, qf, qdf, qddf, tauf = filtered_states(t, q, tau)
    exact_qd = np.column_stack((w * np.cos(w * tf), -0.5 * w * np.sin(w * tf)))
    np.testing.assert_allclose(qf, np.column_stack((np.sin(w * tf), 0.5 * np.cos(w * tf))),
                               atol=1e-4)
    np.testing.assert_allclose(qdf, exact_qd, atol=1e-3)
    np.testing.assert_allclose(qddf, -w ** 2 * qf, atol=2e-2)
    np.testing.assert_allclose(tauf, 3.0 * qf, atol=1e-9)


def test_unevenly_sampled_recordings_differentiate_as_even_ones():
    """States 1 or 2 ms apart (rbd_mujoco_sim in real time): the same q, qd, qdd as the sine's.
    Filtered as if even at the median step (2 ms), they did not."""
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.choice([1e-3, 2e-3], size=6000, p=[0.45, 0.55]))
    w = 2 * np.pi * 0.7
    q = np.column_stack((np.sin(w * t), 0.5 * np.cos(w * t)))
    tf, qf, qdf, qddf, tauf = filtered_states(t, q, 3.0 * q, qd=np.column_stack(
        (w * np.cos(w * t), -0.5 * w * np.sin(w * t))))
    np.testing.assert_allclose(qf, np.column_stack((np.sin(w * tf), 0.5 * np.cos(w * tf))),
                               atol=1e-4)
    np.testing.assert_allclose(qddf, -w ** 2 * qf, atol=2e-2)
    np.testing.assert_allclose(tauf, 3.0 * qf, atol=1e-6)
    np.testing.assert_allclose(np.diff(tf), 2e-3)        # on the median step's grid


def test_recordings_with_gaps_are_filtered_piece_by_piece():
    t = np.concatenate((np.arange(0.0, 5.0, 1e-3), 20.0 + np.arange(0.0, 5.0, 1e-3)))
    assert [(s.start, s.stop) for s in segments(t)] == [(0, 5000), (5000, 10000)]
    q = np.column_stack((t, t)) * 0.1
    tf, _, qd, _, _ = filtered_states(t, q, q)
    assert tf.min() >= 0.3 and tf.max() <= 24.7 and not np.any((tf > 4.7) & (tf < 20.3))
    np.testing.assert_allclose(qd, 0.1, atol=1e-6)   # no step across the gap
    with pytest.raises(InputError, match="strictly increasing"):
        filtered_states(t[::-1], q, q)
