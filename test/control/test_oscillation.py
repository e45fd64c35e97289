"""The oscillation detector (control/safety/oscillation.py) and the controller's answer: soften
the gains, then abort the trajectory and hold; reported by LoopHealth. ROS-free."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_control.control import (ConfigError, Controller, ControllerConfig, JointTrajectory,
                                 TrajectoryPoint)
from rbd_control.control.safety.health import ERROR, OK, WARN, LoopHealth
from rbd_control.control.safety.oscillation import (HOLD, SOFTEN, OscillationDetector,
                                                    OscillationThresholds)

JOINTS = ("a", "b")
INERTIA, KP = np.array([1.0, 0.1]), np.array([10.0, 1.0])


def feed(detector, velocity, seconds, rate=1000.0, still=False, error=None):
    """velocity(t) -> the velocity error of joint a (b stays 0); the actions taken."""
    actions = []
    for k in range(int(seconds * rate)):
        t = k / rate
        ev = np.array([velocity(t), 0.0])
        e = np.zeros(2) if error is None else np.array([error(t), 0.0])
        action = detector.observe(t, ev, e, INERTIA, KP, still)
        if action:
            actions.append((round(t, 3), action))
    return actions


def test_a_fast_swing_is_softened_then_held():
    detector = OscillationDetector(JOINTS)
    actions = feed(detector, lambda t: 0.5 * math.sin(2 * math.pi * 20.0 * t), 1.0)
    assert [a for _, a in actions[:2]] == [SOFTEN, HOLD]
    assert actions[0][0] < 0.2            # three 20 Hz cycles: 0.15 s
    assert detector.scale == pytest.approx(0.5 ** len(actions)) and detector.held
    assert "a oscillates" in detector.reason and "trajectory aborted" in detector.reason
    detector.reset()
    assert detector.scale == 1.0 and not detector.held and detector.detections == len(actions)


@pytest.mark.parametrize("velocity", [
    lambda t: 0.5 * math.sin(2 * math.pi * 2.0 * t),     # slow: within the loop's bandwidth
    lambda t: 0.02 * math.sin(2 * math.pi * 50.0 * t),   # fast but below oscillation.velocity
    # a damped knock (zeta 0.3)
    lambda t: 0.5 * math.exp(-40 * t) * math.sin(2 * math.pi * 20.0 * t),
])
def test_slow_small_or_decaying_motion_is_not_an_oscillation(velocity):
    detector = OscillationDetector(JOINTS)
    assert feed(detector, velocity, 2.0) == [] and detector.scale == 1.0


def test_slowly_growing_energy_while_holding_is_an_oscillation():
    """3 Hz (too slow for the swing test) growing 1.5x per second, as at 60 ms of delay."""
    detector = OscillationDetector(JOINTS)
    w = 2 * math.pi * 3.0
    position = lambda t: 0.01 * math.exp(0.4 * t) * math.sin(w * t)   # noqa: E731
    velocity = lambda t: 0.01 * math.exp(0.4 * t) * w * math.cos(w * t)  # noqa: E731
    actions = feed(detector, velocity, 4.0, still=True, error=position)
    assert actions and actions[0][1] == SOFTEN and "energy grew" in detector.reason
    moving = OscillationDetector(JOINTS)    # the same, while a trajectory moves: not judged
    assert feed(moving, velocity, 4.0, still=False, error=position) == []


def test_off_and_bad_thresholds():
    off = OscillationDetector(JOINTS, OscillationThresholds(frequency=0.0))
    assert feed(off, lambda t: 5 * math.sin(2 * math.pi * 30 * t), 1.0) == []
    with pytest.raises(ConfigError, match="oscillation.soften"):
        OscillationDetector(JOINTS, OscillationThresholds(soften=0.0))


def test_the_controller_softens_then_aborts_the_trajectory_and_reports_it(arm_model):
    names = arm_model.joint_names
    controller = Controller(arm_model, ControllerConfig(mode="feedforward_pd"))
    q0 = np.array([0.0, -0.8, 1.4, -0.6, 0.5, 0.0])
    controller.update(0.0, names, q0, np.zeros(6))
    goal = JointTrajectory(list(names), [TrajectoryPoint(list(q0 + 0.3), time_from_start=5.0)])
    controller.set_trajectory(goal, 0.0)
    health = LoopHealth()
    assert health.report(0.0, oscillation=controller.oscillation).level == OK
    levels = []
    for k in range(1, 600):   # wrist_3 chatters at 25 Hz, 1 rad/s
        t = k * 1e-3
        qd = np.zeros(6)
        qd[5] = math.copysign(1.0, math.sin(2 * math.pi * 25.0 * t))
        command = controller.update(t, names, q0, qd)
        levels.append(health.report(t, oscillation=controller.oscillation).level)
        if controller.trajectory_end_time is None or controller.oscillation.held:
            break
    assert controller.oscillation.held and controller.trajectory_end_time is None   # held
    assert controller.feedback_scale == pytest.approx(0.25)   # from the next state on
    assert command.feedback_scale == pytest.approx(0.5)       # (this one was answered first)
    assert "wrist_3 oscillates" in controller.abort_reason
    assert WARN in levels and levels[-1] == ERROR
    report = health.report(t, oscillation=controller.oscillation)
    assert "oscillation:" in report.message and report.value("oscillation holds") == "1"
    controller.set_gains(kp={"wrist_3": 0.01})        # the user acts: full scale again
    assert controller.feedback_scale == 1.0


def test_a_steady_drift_away_from_the_hold_is_not_an_oscillation():
    """States drifting on their own (a push, a synthetic stream): energy grows, nothing swings."""
    detector = OscillationDetector(JOINTS)
    assert feed(detector, lambda t: -0.3, 4.0, still=True, error=lambda t: 0.3 * t) == []
