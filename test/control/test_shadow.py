"""Shadow mode's core (control/model/shadow.py, Controller mode 'shadow'): the model's torque
at the measured state, the acceleration it uses, the sliding window of its error, and no
trajectory followed."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig, JointTrajectory, TrajectoryError
from rbd_control.control.model.shadow import AccelerationEstimate, ModelError
from rbd_control.dynamics import rnea


def test_shadow_feedforward_is_the_models_torque_at_the_measured_state(arm_model):
    """At constant velocity the estimated acceleration is zero, so the feedforward is
    rnea(q, qd, 0) exactly, and the names' order is the state's, not the model's."""
    controller = Controller(arm_model, ControllerConfig(mode="shadow"))
    names = arm_model.joint_names
    rng = np.random.default_rng(1)
    q0, qd = rng.uniform(-1, 1, len(names)), rng.uniform(-0.5, 0.5, len(names))
    order = list(reversed(range(len(names))))
    for k in range(5):
        q = q0 + qd * 1e-3 * k
        command = controller.update(1e-3 * k, [names[i] for i in order], q[order], qd[order])
    assert command.mode == "shadow" and command.joint_names == names
    np.testing.assert_allclose(command.feedforward, rnea(arm_model, q, qd, np.zeros(len(names))),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(command.feedback, 0.0)


def test_shadow_mode_follows_no_trajectory(arm_model):
    controller = Controller(arm_model, ControllerConfig(mode="shadow"))
    names = arm_model.joint_names
    controller.update(0.0, names, np.zeros(len(names)), np.zeros(len(names)))
    trajectory = JointTrajectory.from_arrays(names, [1.0], [np.full(len(names), 0.1)])
    with pytest.raises(TrajectoryError, match="mode shadow does not follow trajectories"):
        controller.set_trajectory(trajectory, 0.0)


def test_acceleration_estimate_follows_a_sine_at_uneven_stamps():
    """qd = sin(2 pi t) sampled 0.7 to 8.8 ms apart (the real Panda's log): after the filter's
    transient the estimate is the true acceleration, delayed by about 1 / (2 pi f_c)."""
    rng = np.random.default_rng(2)
    t = np.cumsum(rng.uniform(0.0007, 0.0088, 2000))
    estimate, cutoff = AccelerationEstimate(20.0), 20.0
    qdd = np.array([estimate.update(tk, [np.sin(2 * np.pi * tk)])[0] for tk in t])
    lag = 1.0 / (2 * np.pi * cutoff)
    late = t > 1.0
    expected = 2 * np.pi * np.cos(2 * np.pi * (t[late] - lag))
    assert np.max(np.abs(qdd[late] - expected)) < 0.05 * 2 * np.pi
    assert estimate.update(t[-1] + 1.0, [0.0])[0] == 0.0      # after a gap: restarted


def test_model_error_window_rms_peak_and_missing_effort():
    error = ModelError(window=1.0)
    joints, names = ("a", "b"), ("b", "a", "gripper")
    for k in range(31):                       # 0 .. 3 s at 10 Hz
        t = 0.1 * k
        predicted = np.array([1.0, 0.0]) if t < 2.0 else np.array([3.0, -2.0])
        assert error.add(t, joints, predicted, names, [0.0, 0.0, 5.0])
    report = error.report()
    assert report.samples == 11 and report.span == pytest.approx(1.0)   # 2.0 .. 3.0 s
    np.testing.assert_allclose(report.rms, [3.0, 2.0])
    np.testing.assert_allclose(report.peak, [3.0, 2.0])
    assert not error.add(3.1, joints, [0.0, 0.0], ("a", "b"), [])        # no efforts
    assert error.missing_effort == 1
    assert not error.add(3.2, joints, [0.0, 0.0], ("a",), [1.0])          # joint b absent
    assert error.missing_effort == 2 and error.report() is None
