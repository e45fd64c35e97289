"""The controller's use of identification results: friction feedforward and a runtime payload."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.control import (ConfigError, Controller, ControllerConfig, JointTrajectory,
                                 TrajectoryPoint)
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import gravity, load_urdf
from rbd_control.identification import Friction, with_payload

FRICTION = {"shoulder_lift": {"viscous": 2.0, "coulomb": 3.0}, "wrist_3": {"coulomb": 0.5}}
Q0 = np.array([0.0, 0.6, -0.9, 0.4, 0.3, 0.0])
WAIT = dict(state_timeout=10.0)     # the tests jump 0.5 s between states


@pytest.fixture(scope="module")
def arm():
    return load_urdf(default_arm_urdf())


def moving(controller, names):
    """Start a 2 s move and return the command 0.5 s in."""
    controller.update(0.0, names, Q0, np.zeros(6))
    goal = Q0 + np.array([0.3, -0.4, 0.2, 0.5, -0.3, 1.0])
    controller.set_trajectory(JointTrajectory(names, [TrajectoryPoint(positions=goal,
                                                                      time_from_start=2.0)]), 0.0)
    return controller.update(0.5, names, Q0, np.zeros(6))


def test_friction_feedforward_at_the_desired_velocity(arm):
    names = arm.joint_names
    plain = moving(Controller(arm, ControllerConfig(**WAIT)), names)
    compensated = moving(Controller(arm, ControllerConfig(friction=FRICTION, **WAIT)), names)
    expected = Friction.from_dict(names, FRICTION).torque(plain.desired_qd)
    np.testing.assert_allclose(compensated.feedforward - plain.feedforward, expected, atol=1e-12)
    assert abs(expected[1]) > 3.0 and expected[0] == 0.0
    np.testing.assert_array_equal(compensated.feedback, plain.feedback)


def test_gravity_compensation_adds_no_friction(arm):
    controller = Controller(arm, ControllerConfig(mode="gravity_compensation", friction=FRICTION))
    command = controller.update(0.0, arm.joint_names, Q0, np.full(6, 0.5))
    np.testing.assert_allclose(command.feedforward, gravity(arm, Q0), atol=1e-12)


@pytest.mark.parametrize("friction, reason", [
    ({"no_such_joint": {"viscous": 1.0}}, "unknown joints"),
    ({"elbow": {"viscous": -1.0}}, "finite numbers >= 0"),
    ({"elbow": 3.0}, "friction"),
])
def test_bad_friction_is_refused_with_the_reason(arm, friction, reason):
    with pytest.raises(ConfigError, match=reason):
        Controller(arm, ControllerConfig(friction=friction))


def test_set_payload_changes_the_model_and_keeps_the_trajectory(arm):
    names = arm.joint_names
    controller = Controller(arm, ControllerConfig(**WAIT))
    before = moving(controller, names)
    controller.set_payload("tool0", 1.5, [0.0, 0.0, 0.05], [1e-3, 1e-3, 1e-3])
    loaded = with_payload(arm, "tool0", 1.5, [0.0, 0.0, 0.05], [1e-3, 1e-3, 1e-3])
    np.testing.assert_array_equal(controller.model.inertial_parameters(),
                                  loaded.inertial_parameters())
    assert controller.trajectory_end_time == 2.0
    after = controller.update(0.5, names, Q0, np.zeros(6))
    np.testing.assert_array_equal(after.desired_q, before.desired_q)
    assert np.abs(after.feedforward - before.feedforward).max() > 1.0
    controller.set_payload("tool0", 2.0)            # replaces the first payload
    np.testing.assert_allclose(controller.model.inertial_parameters(),
                               with_payload(arm, "tool0", 2.0).inertial_parameters())
    controller.set_payload("tool0", 0.0)            # removes it
    np.testing.assert_array_equal(controller.model.inertial_parameters(),
                                  arm.inertial_parameters())
    with pytest.raises(ConfigError, match="no_such_link"):
        controller.set_payload("no_such_link", 1.0)
    with pytest.raises(ConfigError, match="must be finite"):
        controller.set_payload("tool0", float("nan"))
    with pytest.raises(ConfigError, match="com must be 3 numbers"):
        controller.set_payload("tool0", 1.0, [0.0, 0.1])


def test_the_default_gains_follow_the_payload_and_given_gains_stay(arm):
    """The default gains are the bandwidth rule on the inertia carried: a controller given
    the payload at runtime gets the gains of one built on the loaded model; gains the config
    or set_gains gave do not move."""
    payload = ("tool0", 1.5, [0.0, 0.0, 0.05], [1e-3, 1e-3, 1e-3])
    loaded = Controller(with_payload(arm, *payload), ControllerConfig(**WAIT))
    controller = Controller(arm, ControllerConfig(**WAIT, kp={"shoulder_pan": 321.0}))
    bare = controller.gains
    controller.set_gains(kd={"wrist_3": 0.5})
    controller.set_payload(*payload)
    for field in ("kp", "kd"):
        expected = getattr(loaded.gains, field).copy()
        expected[arm.joint_names.index("shoulder_pan" if field == "kp" else "wrist_3")] = (
            321.0 if field == "kp" else 0.5)
        np.testing.assert_allclose(getattr(controller.gains, field), expected, rtol=1e-12)
    wrist = arm.joint_names.index("wrist_2")
    # the tool dominates the wrist: 4x with the effective inertia of loop_design.py (its coupled
    # modes bound it), 5x on H_ii alone
    assert controller.gains.kp[wrist] > 3.5 * bare.kp[wrist]
    controller.set_payload("tool0", 0.0)                         # removed: back to the bare arm's
    np.testing.assert_allclose(controller.gains.kp[wrist], bare.kp[wrist], rtol=1e-12)
