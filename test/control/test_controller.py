"""Controller behaviour without a plant: validation, gains, clamping, mode switches, watchdog."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from rbd_control.control import (Command, ConfigError, Controller, ControllerConfig,
                                 JointTrajectory, StateError, TrajectoryError, TrajectoryPoint)
from rbd_control.control.laws import joint as laws
from rbd_control.control.safety.command_limits import LimitsConfig
from rbd_control.control.laws.loop_design import (reference_inertia, reference_poses,
                                                  design_bandwidth, loop_margins,
                                                  sampled_loop_matrix)
from rbd_control.dynamics import crba, gravity, load_urdf, rnea

Q0 = np.array([0.3, 0.7, -0.8, 0.4, 0.6, 0.2])
NAMES = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")


@pytest.fixture()
def names(arm_model):
    return arm_model.joint_names


def fresh(arm_model, **config):
    """A controller; the tests below jump in time, so the watchdog is lenient unless asked."""
    config.setdefault("state_timeout", 10.0)
    return Controller(arm_model, ControllerConfig(**config))


# --- import hygiene ----------------------------------------------------------------------

def test_control_package_never_imports_rclpy():
    code = ("import sys; import rbd_control.control, rbd_control.description; "
            "sys.exit(1 if any(m == 'rclpy' or m.startswith('rclpy.') for m in sys.modules) "
            "else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# --- measured state validation -----------------------------------------------------------

@pytest.mark.parametrize("mutate, match", [
    (lambda n, q, qd: (n, q[:-1], qd), "6 joint names but 5 positions"),
    (lambda n, q, qd: (n, q, qd[:-1]), "6 joint names but 5 velocities"),
    (lambda n, q, qd: (n, np.r_[q[:2], np.nan, q[3:]], qd), "elbow position nan is not finite"),
    (lambda n, q, qd: (n, q, np.r_[qd[:5], np.inf]), "wrist_3 velocity inf is not finite"),
    (lambda n, q, qd: (n[:-1] + (n[0],), q, qd), "duplicate joint names"),
    (lambda n, q, qd: (n, q, np.r_[qd[:5], 1e6]), "exceeds"),
    (lambda n, q, qd: (n, ["a"] * 6, qd), "positions are not numbers"),
])
def test_bad_states_are_rejected_with_a_reason(arm_model, names, mutate, match):
    controller = fresh(arm_model)
    with pytest.raises(StateError, match=match):
        controller.update(0.0, *mutate(tuple(names), Q0.copy(), np.zeros(6)))


def test_unknown_joint_names_ignored_by_default_and_rejected_when_strict(arm_model, names):
    extended = tuple(names) + ("gripper_finger",)
    q = np.r_[Q0, 0.01]
    cmd = fresh(arm_model).update(0.0, extended, q, np.zeros(7))
    assert cmd.tau.shape == (6,)
    with pytest.raises(StateError, match="gripper_finger"):
        fresh(arm_model, ignore_unknown_joints=False).update(0.0, extended, q, np.zeros(7))


def test_state_in_any_order_gives_same_command(arm_model, names):
    order = [3, 0, 5, 1, 4, 2]
    a = fresh(arm_model).update(0.0, names, Q0, np.arange(6) * 0.1)
    b = fresh(arm_model).update(0.0, [names[i] for i in order], Q0[order],
                                (np.arange(6) * 0.1)[order])
    np.testing.assert_allclose(a.tau, b.tau)


def test_bad_now_is_rejected(arm_model, names):
    with pytest.raises(StateError, match="now"):
        fresh(arm_model).update(math.nan, names, Q0, np.zeros(6))


# --- configuration -----------------------------------------------------------------------

@pytest.mark.parametrize("config, match", [
    (dict(mode="pid"), "mode 'pid'"),
    (dict(safe_action="brake"), "safe_action"),
    (dict(effort_scale=0.0), "effort_scale"),
    (dict(effort_scale=1.5), "effort_scale"),
    (dict(state_timeout=-1), "state_timeout"),
    (dict(joints=["elbow", "elbow"]), "duplicates"),
    (dict(joints=["elbow", "knee"]), "knee"),
    (dict(kp=[1, 2, 3]), "kp has 3 values for 6 joints"),
    (dict(kd={"knee": 1.0}), "knee"),
    (dict(kp=-1.0), "kp for shoulder_pan is -1.0"),
    (dict(ki={"elbow": math.nan}), "ki for elbow is not finite"),
])
def test_bad_config_is_rejected_with_a_reason(arm_model, config, match):
    with pytest.raises(ConfigError, match=match):
        fresh(arm_model, **config)


def test_missing_effort_limit_is_an_error_unless_overridden(arm_urdf):
    no_limit = arm_urdf.replace('<limit effort="12" velocity="4.0"/>', "")
    model = load_urdf(no_limit)
    with pytest.raises(ConfigError, match="wrist_3"):
        Controller(model, ControllerConfig())
    controller = Controller(model, ControllerConfig(effort_limit={"wrist_3": 5.0}))
    assert controller._limiter.limit[-1] == 5.0


def test_set_mode_rejects_unknown(arm_model):
    with pytest.raises(ConfigError):
        fresh(arm_model).set_mode("position", 0.0)


# --- gains -------------------------------------------------------------------------------

def test_default_gains_follow_the_documented_rule(arm_model):
    """loop_design.py: d = min_q 1/(H^-1)_ii scaled so that D <= H(q) at every reference pose; w
    the largest (<= the bandwidth bound) keeping 45 deg and 2x on the sampled, delayed unit
    loop."""
    inverses = [np.linalg.inv(crba(arm_model, q)) for q in reference_poses(arm_model)]
    m = 1.0 / np.max([np.diag(inv) for inv in inverses], axis=0)
    mu = max(np.linalg.eigvalsh(np.sqrt(np.outer(m, m)) * inv)[-1] for inv in inverses)
    d = m / mu
    np.testing.assert_allclose(reference_inertia(arm_model), d, rtol=1e-6)
    assert 2.0 < mu < 3.0   # the coupled modes of the default arm: 1/(H^-1)_ii alone is not enough
    for H in (np.linalg.inv(inv) for inv in inverses):   # D <= H(q): no mode faster than designed
        assert np.linalg.eigvalsh(H - np.diag(d))[0] > -1e-9
    controller = fresh(arm_model, bandwidth_hz=20.0, damping_ratio=0.8,
                       expected_state_period=0.002, expected_delay=0.006)
    design = design_bandwidth(0.002, 0.006, 0.8, 20.0)
    w = design.omega
    assert 2 * math.pi * 4.0 < w < 2 * math.pi * 20.0        # the margins decide, not the bound
    pm, gm = loop_margins(w**2, 2 * 0.8 * w, 0.002, 0.006)
    assert pm == pytest.approx(45.0, abs=0.1) and gm >= 2.0
    assert loop_margins((1.02 * w)**2, 2 * 0.8 * 1.02 * w, 0.002, 0.006)[0] < 45.0   # the largest
    np.testing.assert_allclose(controller.gains.kp, d * w**2)
    np.testing.assert_allclose(controller.gains.kd, 2 * 0.8 * w * d)
    # computed_torque sees w^2 everywhere
    np.testing.assert_allclose(controller.gains.kp_acc, w**2)
    assert not np.any(controller.gains.ki)
    np.testing.assert_allclose(controller.gains.i_clamp, 0.2 * np.asarray(arm_model.effort_limit))
    fast = fresh(arm_model, bandwidth_hz=5.0, expected_state_period=0.001, expected_delay=0.0)
    np.testing.assert_allclose(fast.gains.kp_acc, (2 * math.pi * 5.0)**2)   # the bound decides


def test_the_default_design_keeps_its_margins_at_250_hz_and_10_ms():
    design = design_bandwidth()
    assert (design.period, design.delay) == (0.004, 0.010)
    assert design.phase_margin_deg >= 45.0 - 1e-6 and design.gain_margin >= 2.0
    assert 3.0 < design.bandwidth_hz < 4.0
    w = design.omega
    for scale in (0.05, 0.2, 0.5, 1.0, 1.9):   # every mode lambda in (0, 1] of H^-1 D, and more
        Phi = sampled_loop_matrix(scale * w**2, scale * 2 * w, 0.004, 0.010)
        assert np.abs(np.linalg.eigvals(Phi)).max() < 1.0, scale
    # the old rule (8 Hz on min H_ii) on a mode lambda = 10.7 of the default arm: unstable at 4 ms
    w8 = 2 * math.pi * 8.0
    assert loop_margins(10.7 * w8**2, 10.7 * 2 * w8, 0.001, 0.004)[1] == 0.0


def test_gain_overrides_by_dict_list_and_scalar(arm_model, names):
    base = fresh(arm_model).gains
    c = fresh(arm_model, kp={"elbow": 123.0}, kd=2.0)
    assert c.gains.kp[2] == 123.0 and c.gains.kp[0] == base.kp[0]
    np.testing.assert_allclose(c.gains.kd, 2.0)
    c.set_gains(ki=list(range(6)))
    np.testing.assert_allclose(c.gains.ki, range(6))
    with pytest.raises(ConfigError, match="i_clamp"):
        c.set_gains(i_clamp=-1)


# --- laws and clamping -------------------------------------------------------------------

def test_feedforward_pd_command_is_the_documented_law(arm_model, names):
    controller = fresh(arm_model, mode="feedforward_pd")
    qd = np.array([0.1, -0.2, 0.3, 0.0, 0.1, -0.1])
    controller.update(0.0, names, Q0, qd)  # anchors the hold at Q0
    q = Q0 + 0.01
    cmd = controller.update(0.001, names, q, qd)
    kp, kd = controller.gains_at(q)   # the default gains at this pose (inertia_schedule.py)
    expected = gravity(arm_model, q) + kp * (Q0 - q) + kd * (0 - qd)
    np.testing.assert_allclose(cmd.tau, np.clip(expected, -arm_model.effort_limit,
                                                arm_model.effort_limit))
    np.testing.assert_allclose(cmd.feedforward + cmd.feedback, expected)


def test_computed_torque_command_is_the_documented_law(arm_model, names):
    controller = fresh(arm_model, mode="computed_torque")
    qd = np.array([0.1, -0.2, 0.3, 0.0, 0.1, -0.1])
    controller.update(0.0, names, Q0, qd)
    q = Q0 - 0.002
    cmd = controller.update(0.001, names, q, qd)
    g = controller.gains
    v = g.kp_acc * (Q0 - q) + g.kd_acc * (0 - qd)
    expected = crba(arm_model, q) @ v + rnea(arm_model, q, qd, np.zeros(6))
    np.testing.assert_allclose(cmd.feedforward + cmd.feedback, expected, rtol=1e-9, atol=1e-9)


def test_effort_is_clamped_to_limit_times_scale(arm_model, names):
    # the clamp alone: the torque rate (on by default) would spread the step over 8 states
    controller = fresh(arm_model, mode="feedforward_pd", kp=1e6, effort_scale=0.5,
                       limits=LimitsConfig(torque_rate=0.0))
    controller.update(0.0, names, Q0, np.zeros(6))
    cmd = controller.update(0.001, names, Q0 + np.array([1, -1, 1, -1, 1, -1]) * 0.1, np.zeros(6))
    limit = 0.5 * np.asarray(arm_model.effort_limit)
    np.testing.assert_allclose(np.abs(cmd.tau), limit)
    assert np.all(cmd.saturated)


def test_continuous_joint_error_wraps(arm_model, names):
    controller = fresh(arm_model, mode="feedforward_pd")
    q = Q0.copy()
    q[5] = 3.1
    controller.update(0.0, names, q, np.zeros(6))
    q[5] = -3.13  # moved 0.053 rad forward, across the +-pi seam
    cmd = controller.update(0.001, names, q, np.zeros(6))
    assert cmd.error[5] == pytest.approx(3.1 - (-3.13) - 2 * math.pi)
    assert abs(cmd.feedback[5]) < controller.gains_at(q)[0][5] * 0.06


def test_integral_term_is_bounded_by_i_clamp(arm_model, names):
    controller = fresh(arm_model, mode="feedforward_pd", ki=1000.0, i_clamp=3.0)
    controller.update(0.0, names, Q0, np.zeros(6))
    for k in range(1, 2000):  # a persistent error (arm held away by something)
        cmd = controller.update(k * 1e-3, names, Q0 - 0.01, np.zeros(6))
    assert not np.any(cmd.saturated)
    i_part = cmd.feedback - controller.gains_at(Q0 - 0.01)[0] * cmd.error
    np.testing.assert_allclose(i_part, 3.0, rtol=1e-9)


def test_integral_does_not_wind_up_while_saturated(arm_model, names):
    controller = fresh(arm_model, mode="feedforward_pd", kp={"elbow": 1e5}, ki=100.0, i_clamp=1e9)
    controller.update(0.0, names, Q0, np.zeros(6))
    for k in range(1, 500):
        cmd = controller.update(k * 1e-3, names, Q0 - np.eye(6)[2] * 0.1, np.zeros(6))
    assert cmd.saturated[2]
    assert controller._integral.value[2] == 0.0  # elbow pushed into its limit: no integration
    assert controller._integral.value[0] == 0.0 and cmd.error[0] == 0.0


# --- mode switches -----------------------------------------------------------------------

def test_switch_from_gravity_comp_asks_only_what_the_new_mode_asks(arm_model, names):
    qd = np.array([0.2, -0.1, 0.3, 0.5, -0.4, 0.1])
    for new_mode in ("feedforward_pd", "computed_torque"):
        controller = fresh(arm_model, mode="gravity_compensation")
        controller.update(0.0, names, Q0 - 0.3, np.zeros(6))  # hold anchor would be stale
        before = controller.update(0.5, names, Q0, qd)
        controller.set_mode(new_mode, 0.5)
        after = controller.update(0.5, names, Q0, qd)
        # the new law with the pose at entry as its target and nothing else
        g = controller.gains
        kp, kd = controller.gains_at(Q0)
        if new_mode == "feedforward_pd":
            ff, fb = laws.feedforward_pd(arm_model, Q0, qd, Q0, np.zeros(6), np.zeros(6), kp, kd)
        else:
            ff, fb = laws.computed_torque(arm_model, Q0, qd, Q0, np.zeros(6), np.zeros(6),
                                          g.kp_acc, g.kd_acc)
        np.testing.assert_allclose(after.tau, ff + fb, atol=1e-9)
        np.testing.assert_allclose(after.error, 0.0)
        if new_mode == "feedforward_pd":  # both laws carry G(q): the jump is only -Kd qd
            np.testing.assert_allclose(after.tau - before.tau, -kd * qd, atol=1e-9)


def test_switch_resets_integral(arm_model, names):
    # the law alone: the torque rate's ramp after a switch is test_command_limits.py's
    controller = fresh(arm_model, mode="feedforward_pd", ki=50.0,
                       limits=LimitsConfig(torque_rate=0.0))
    controller.update(0.0, names, Q0, np.zeros(6))
    for k in range(1, 200):
        controller.update(k * 1e-3, names, Q0 - 0.01, np.zeros(6))
    assert np.any(controller._integral.value)
    controller.set_mode("computed_torque", 0.2)
    cmd = controller.update(0.2, names, Q0 - 0.01, np.zeros(6))
    g = controller.gains
    ff, fb = laws.computed_torque(arm_model, Q0 - 0.01, np.zeros(6), Q0, np.zeros(6), np.zeros(6),
                                  g.kp_acc, g.kd_acc)
    np.testing.assert_allclose(cmd.tau, np.clip(ff + fb, -arm_model.effort_limit,
                                                arm_model.effort_limit),
                               atol=1e-9)


def test_trajectories_are_refused_in_gravity_compensation(arm_model, names):
    controller = fresh(arm_model, mode="gravity_compensation")
    controller.update(0.0, names, Q0, np.zeros(6))
    with pytest.raises(TrajectoryError, match="gravity_compensation"):
        controller.set_trajectory(
            JointTrajectory(names, [TrajectoryPoint(Q0, time_from_start=1)]), 0.0)


# --- trajectories through the controller -------------------------------------------------

def test_trajectory_needs_a_fresh_state(arm_model, names):
    controller = fresh(arm_model, state_timeout=0.1)
    traj = JointTrajectory(names, [TrajectoryPoint(Q0, time_from_start=1)])
    with pytest.raises(TrajectoryError, match="no joint state"):
        controller.set_trajectory(traj, 0.0)
    controller.update(0.0, names, Q0, np.zeros(6))
    with pytest.raises(TrajectoryError, match="stale"):
        controller.set_trajectory(traj, 0.5)


def test_partial_goal_only_when_allowed(arm_model, names):
    traj = JointTrajectory(["elbow"], [TrajectoryPoint([0.0], time_from_start=1)])
    strict = fresh(arm_model)
    strict.update(0.0, names, Q0, np.zeros(6))
    with pytest.raises(TrajectoryError, match="allow_partial"):
        strict.set_trajectory(traj, 0.0)
    relaxed = fresh(arm_model, allow_partial_joints_goal=True)
    relaxed.update(0.0, names, Q0, np.zeros(6))
    relaxed.set_trajectory(traj, 0.0)
    cmd = relaxed.update(2.0, names, Q0, np.zeros(6))
    expected = Q0.copy()
    expected[2] = 0.0
    np.testing.assert_allclose(cmd.desired_q, expected)


def test_holding_flag_and_end_time(arm_model, names):
    controller = fresh(arm_model)
    cmd = controller.update(0.0, names, Q0, np.zeros(6))
    assert cmd.holding and controller.trajectory_end_time is None
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint(Q0 + 0.1, time_from_start=1)]), 0.0)
    assert controller.trajectory_end_time == pytest.approx(1.0)
    assert not controller.update(0.5, names, Q0, np.zeros(6)).holding
    end = controller.update(1.5, names, Q0, np.zeros(6))
    assert end.holding
    np.testing.assert_allclose(end.desired_q, Q0 + 0.1)
    controller.hold(1.6)
    assert controller.trajectory_end_time is None
    np.testing.assert_allclose(controller.update(1.7, names, Q0, np.zeros(6)).desired_q, Q0)


def test_subset_of_model_joints_commanded(arm_model, names):
    controller = fresh(arm_model, joints=["wrist_2", "elbow"])
    cmd = controller.update(0.0, names, Q0, np.zeros(6))
    assert cmd.joint_names == ("wrist_2", "elbow")
    np.testing.assert_allclose(cmd.tau, gravity(arm_model, Q0)[[4, 2]])
    with pytest.raises(TrajectoryError, match="shoulder_pan"):
        controller.set_trajectory(
            JointTrajectory(names, [TrajectoryPoint(Q0, time_from_start=1)]), 0.0)


# --- watchdog and model changes ----------------------------------------------------------

def test_watchdog_without_any_state_commands_zero(arm_model):
    safe = fresh(arm_model).check_watchdog(0.0)
    assert isinstance(safe, Command) and safe.mode == "safe_zero" and not np.any(safe.tau)


def test_watchdog_boundary(arm_model, names):
    controller = fresh(arm_model, state_timeout=0.1)
    controller.update(1.0, names, Q0, np.zeros(6))
    assert controller.check_watchdog(1.0999) is None
    safe = controller.check_watchdog(1.1001)
    np.testing.assert_allclose(safe.tau, gravity(arm_model, Q0))


def test_state_gap_longer_than_timeout_aborts_trajectory_even_without_watchdog_call(arm_model,
                                                                                    names):
    controller = fresh(arm_model, state_timeout=0.1)
    controller.update(0.0, names, Q0, np.zeros(6))
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint(Q0 + 0.5, time_from_start=2)]), 0.0)
    controller.update(0.05, names, Q0, np.zeros(6))
    cmd = controller.update(0.5, names, Q0 + 0.01, np.zeros(6))  # 450 ms without a state
    assert cmd.holding and controller.trajectory_end_time is None
    np.testing.assert_allclose(cmd.desired_q, Q0)  # the pose at the last good state


def test_set_model_adopts_new_robot_and_keeps_last_state(arm_urdf, arm_model, names):
    controller = fresh(arm_model)
    controller.update(0.0, names, Q0, np.zeros(6))
    heavier = load_urdf(arm_urdf.replace('<mass value="2.9"/>', '<mass value="4.0"/>'))
    controller.set_model(heavier)
    assert controller.gains.kp[2] > fresh(arm_model).gains.kp[2]
    np.testing.assert_allclose(controller.check_watchdog(0.05) is None, True)
    cmd = controller.update(0.001, names, Q0, np.zeros(6))
    np.testing.assert_allclose(cmd.tau, gravity(heavier, Q0), atol=1e-9)


@pytest.mark.parametrize("args, match", [
    ((None, Q0, np.zeros(6)), "joint names must be a sequence"),
    (("abc", Q0, np.zeros(6)), "3 joint names but 6 positions"),
    ((None, None, None), "joint names"),
])
def test_malformed_state_arguments_raise_state_error(arm_model, args, match):
    with pytest.raises(StateError, match=match):
        fresh(arm_model).update(0.0, *args)


@pytest.mark.parametrize("traj, match", [
    (None, "malformed trajectory"),
    (JointTrajectory(["elbow"], None), "omits joints"),
    (JointTrajectory(list(NAMES), None), "malformed trajectory"),
    (JointTrajectory(list(Q0.astype(str)), [TrajectoryPoint(Q0)]), "does not command"),
    ("not a trajectory", "malformed trajectory"),
])
def test_malformed_trajectories_raise_trajectory_error(arm_model, names, traj, match):
    controller = fresh(arm_model)
    controller.update(0.0, names, Q0, np.zeros(6))
    with pytest.raises(TrajectoryError, match=match):
        controller.set_trajectory(traj, 0.0)


def test_non_numeric_trajectory_fields_raise_trajectory_error(arm_model, names):
    controller = fresh(arm_model)
    controller.update(0.0, names, Q0, np.zeros(6))
    for point, match in [(TrajectoryPoint(["x"] * 6, time_from_start=1),
                          "positions are not numbers"),
                         (TrajectoryPoint(Q0, time_from_start="soon"),
                          "time_from_start is not a number")]:
        with pytest.raises(TrajectoryError, match=match):
            controller.set_trajectory(JointTrajectory(names, [point]), 0.0)
    with pytest.raises(TrajectoryError, match="start_time"):
        controller.set_trajectory(
            JointTrajectory(names, [TrajectoryPoint(Q0, time_from_start=1)], "x"), 0.0)


def test_state_that_yields_no_valid_command_does_not_feed_the_watchdog(arm_model, names,
                                                                       monkeypatch):
    # gains are bounded so that no valid input can make the law non-finite any more (see
    # test_hostile_input.py); inject the fault into the law to check the bookkeeping
    controller = fresh(arm_model, mode="feedforward_pd", state_timeout=0.1)
    controller.update(0.0, names, Q0, np.zeros(6))
    nan_law = lambda *args, **kwargs: (np.full(6, np.nan), np.zeros(6))  # noqa: E731
    monkeypatch.setattr(laws, "feedforward_pd", nan_law)
    with pytest.raises(StateError, match="non-finite"):
        controller.update(0.05, names, Q0 - 1.5, np.ones(6) * 1e3)
    safe = controller.check_watchdog(0.15)
    assert safe is not None and np.all(np.isfinite(safe.tau))
