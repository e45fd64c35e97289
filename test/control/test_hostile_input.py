"""Hostile and unlucky input to the controller core: every case is a named refusal or a safe
command, never a NaN plan, a quadratic blow-up, a zero-effort drop or an unbounded log.

Each test reproduces one failure the landed code had (see the comment above it) and checks the
fixed behaviour. Speed figures are in bench/hostile_input.py, not asserted here.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_control.control import (ConfigError, ControlError, Controller, ControllerConfig,
                                 JointTrajectory, MissingJointsError, StateError, TrajectoryError,
                                 TrajectoryPoint)
from rbd_control.control.laws.loop_design import reference_inertia, reference_poses
from rbd_control.control.throttle import ThrottledWarnings
from rbd_control.dynamics import RbdError, crba, gravity, load_urdf

Q0 = np.array([0.3, 0.7, -0.8, 0.4, 0.6, 0.2])


def fresh(model, **config):
    config.setdefault("state_timeout", 10.0)
    return Controller(model, ControllerConfig(**config))


def started(model, **config):
    controller = fresh(model, **config)
    controller.update(0.0, model.joint_names, Q0, np.zeros(6))
    return controller


def assert_still_controls(controller, names, now=0.02):
    command = controller.update(now, names, Q0, np.zeros(6))
    assert np.all(np.isfinite(command.tau)) and np.all(np.isfinite(command.desired_q))
    return command


# --- per-message cost: O(n) and bounded messages ------------------------------------------
# Before: names.count per name made a 40,007-name state take 15 s and its error list every name.

def many_names(model, extra=40_000):
    return list(model.joint_names) + [f"junk_{i}" for i in range(extra)]


def test_huge_state_with_a_duplicate_is_refused_with_a_short_reason(arm_model):
    names = many_names(arm_model) + ["junk_7"]
    q = np.zeros(len(names))
    with pytest.raises(StateError, match=r"duplicate joint names in state: \['junk_7'\]") as info:
        fresh(arm_model).update(0.0, names, q, q)
    assert len(str(info.value)) < 300


def test_huge_state_with_unknown_names_controls_the_model_joints(arm_model):
    names = many_names(arm_model)
    q = np.r_[Q0, np.zeros(len(names) - 6)]
    command = fresh(arm_model).update(0.0, names, q, np.zeros(len(names)))
    np.testing.assert_allclose(command.tau, np.clip(gravity(arm_model, Q0), -1e9, 1e9), atol=1e-6)
    with pytest.raises(StateError, match=r"junk_0.*and 39992 more") as info:
        fresh(arm_model, ignore_unknown_joints=False).update(0.0, names, q, np.zeros(len(names)))
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("extra, match", [
    (["junk_1", "junk_1"], r"duplicate joint names in trajectory: \['junk_1'\]"),
    ([], r"does not command: \['junk_0', .* and 39992 more\]"),
])
def test_huge_trajectory_names_are_refused_with_a_short_reason(arm_model, extra, match):
    names = many_names(arm_model) + extra
    point = TrajectoryPoint(np.zeros(len(names)), time_from_start=1.0)
    with pytest.raises(TrajectoryError, match=match) as info:
        started(arm_model).set_trajectory(JointTrajectory(names, [point]), 0.0)
    assert len(str(info.value)) < 300


def test_partial_goal_lists_missing_joints_without_rebuilding_a_set_per_name(arm_model):
    controller = started(arm_model)
    point = TrajectoryPoint(Q0[:2], time_from_start=1.0)
    with pytest.raises(TrajectoryError, match=r"omits joints \['elbow', 'wrist_1'"):
        controller.set_trajectory(JointTrajectory(arm_model.joint_names[:2], [point]), 0.0)


# --- default gains once per model, O(n) memory ----------------------------------------------
# Before: 65 full CRBAs (nq x nq each) - 29 s and 12.6 GB for 5000 joints.

def comb_urdf(branches, length):
    """`branches` chains of `length` links hung from one base: many joints, shallow depth."""
    links, joints = ['<link name="base"/>'], []
    for b in range(branches):
        for k in range(length):
            name = f"b{b}_l{k}"
            links.append(f'<link name="{name}"><inertial><mass value="0.5"/>'
                         '<origin xyz="0 0 0.05"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" '
                         'ixy="0" ixz="0" iyz="0"/></inertial></link>')
            parent = "base" if k == 0 else f"b{b}_l{k - 1}"
            joints.append(f'<joint name="b{b}_j{k}" type="revolute"><parent link="{parent}"/>'
                          f'<child link="{name}"/><origin xyz="0 0 0.1"/>'
                          f'<axis xyz="{("0 1 0", "1 0 0")[k % 2]}"/>'
                          '<limit lower="-2" upper="2" effort="50" velocity="1"/></joint>')
    return f'<robot name="comb">{"".join(links)}{"".join(joints)}</robot>'


def test_default_gains_take_the_effective_inertia_over_the_reference_poses(arm_model):
    """Each joint's d is at most its effective inertia 1/(H^-1)_ii (the others free) at every
    reference pose, and D <= H(q) there (loop_design.py)."""
    d = reference_inertia(arm_model)
    for q in reference_poses(arm_model):
        H = crba(arm_model, q)
        assert np.all(d <= 1.0 / np.diag(np.linalg.inv(H)) * (1 + 1e-9))
        assert np.linalg.eigvalsh(H - np.diag(d))[0] > -1e-9


def test_controller_on_3000_joints_builds_and_gives_gravity_torques():
    model = load_urdf(comb_urdf(100, 30))
    assert model.nq == 3000
    controller = fresh(model)  # the full-H rule needed 65 x 72 MB here
    assert np.all(controller.gains.kp > 0) and np.all(np.isfinite(controller.gains.kp))
    q = np.zeros(model.nq)
    command = controller.update(0.0, model.joint_names, q, q)
    np.testing.assert_allclose(command.tau, gravity(model, q), atol=1e-9)


# --- every float that reaches a plan or a gain is sane --------------------------------------
# Before: these were accepted, the plan became NaN, and the next states were refused as
# "qd contains NaN".

def arm_trajectory(names, points, start_time=0.0):
    return JointTrajectory(names, points, start_time)


@pytest.mark.parametrize("make, match", [
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, time_from_start=1e155)]),
     "time_from_start 1e.155 s of the last point is beyond the bound"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, time_from_start=1.0)], start_time=1e300),
     "start_time .* beyond the bound"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, time_from_start=1.0),
                                  TrajectoryPoint(Q0 + 0.1, time_from_start=1.0 + 1e-300)]),
     "time_from_start must be strictly increasing"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, time_from_start=1.0),
                                  TrajectoryPoint(Q0 + 0.1, time_from_start=1.0 + 1e-9)]),
     "points must be at least 1e-06 s apart"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, effort=[1e308] * 6, time_from_start=1.0),
                                  TrajectoryPoint(Q0, effort=[-1e308] * 6, time_from_start=2.0)]),
     "effort has 1e.308, beyond the bound"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, velocities=[1e200] * 6, time_from_start=1)]),
     "velocities has 1e.200"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0, [0] * 6, [1e300] * 6, time_from_start=1)]),
     "accelerations has 1e.300"),
    (lambda n: arm_trajectory(n, [TrajectoryPoint(Q0 * 1e12, time_from_start=1.0)]),
     "positions has .*beyond the bound"),
])
def test_absurd_trajectory_numbers_are_refused_by_name(arm_model, make, match):
    controller = started(arm_model)
    with pytest.raises(TrajectoryError, match=match):
        controller.set_trajectory(make(arm_model.joint_names), 0.01)
    assert_still_controls(controller, arm_model.joint_names)


def test_points_just_apart_enough_plan_finitely(arm_model):
    controller = started(arm_model)
    points = [TrajectoryPoint(Q0, [0.0] * 6, [0.0] * 6, time_from_start=1.0),
              TrajectoryPoint(Q0 + 1e-3, [0.0] * 6, [0.0] * 6, time_from_start=1.0 + 2e-6)]
    controller.set_trajectory(arm_trajectory(arm_model.joint_names, points), 0.0)
    for now in (0.5, 1.0 + 1e-6, 2.0):
        assert_still_controls(controller, arm_model.joint_names, now)


@pytest.mark.parametrize("gains, match", [
    (dict(kp=1e308), "kp for shoulder_pan is 1e.308, beyond the bound"),
    (dict(kd={"elbow": 1e300}), "kd for elbow is 1e.300"),
    (dict(ki=1e11), "ki for shoulder_pan"),
    (dict(i_clamp=1e13), "i_clamp for shoulder_pan"),
])
def test_absurd_gains_are_refused_and_the_old_gains_kept(arm_model, gains, match):
    controller = started(arm_model, mode="computed_torque")
    before = controller.gains.kp.copy()
    with pytest.raises(ConfigError, match=match):
        controller.set_gains(**gains)
    np.testing.assert_array_equal(controller.gains.kp, before)
    assert_still_controls(controller, arm_model.joint_names)


@pytest.mark.parametrize("config, match", [
    (dict(kp=1e308), "kp for shoulder_pan"),
    (dict(effort_limit=1e308), "effort_limit for shoulder_pan"),
    (dict(damping=1e300), "damping for shoulder_pan"),
    (dict(bandwidth_hz=1e308), "bandwidth_hz"),
    (dict(damping_ratio=1e308), "damping_ratio"),
    (dict(state_timeout=1e300), "state_timeout"),
    (dict(fixed_positions={"elbow": math.nan}), "fixed_positions for elbow"),
    (dict(fixed_positions=[1.0]), "fixed_positions must be a mapping"),
])
def test_absurd_config_is_refused_by_name(arm_model, config, match):
    with pytest.raises(ConfigError, match=match):
        fresh(arm_model, **config)


def test_largest_allowed_gains_still_give_finite_commands(arm_model):
    for mode in ("feedforward_pd", "computed_torque"):
        controller = started(arm_model, mode=mode, kp=1e10, kd=1e10, ki=1e10, i_clamp=1e12)
        for k in range(1, 4):
            q = Q0 + 1e4 * (-1) ** k - Q0 * 2 * k
            q = np.clip(q, -1e4, 1e4)
            command = controller.update(0.001 * k, arm_model.joint_names, q, np.full(6, 1e3))
            assert np.all(np.isfinite(command.tau))


# --- the interpolated path stays within the limits -----------------------------------------
# Before: a 50 rad/s waypoint velocity took shoulder_lift's desired position to 5.8 rad
# against its 2.2 rad limit; only the waypoints were checked.

def test_overshooting_path_is_refused_naming_joint_time_and_value(arm_model):
    controller = started(arm_model)
    names = arm_model.joint_names
    v = np.zeros(6)
    v[1] = 50.0
    points = [TrajectoryPoint(Q0, np.zeros(6), time_from_start=0.5),
              TrajectoryPoint(Q0 + [0, 1.0, 0, 0, 0, 0], v, time_from_start=1.0),
              TrajectoryPoint(Q0, np.zeros(6), time_from_start=1.5)]
    with pytest.raises(TrajectoryError, match=r"interpolated path of shoulder_lift reaches "
                                              r"-?[0-9.]+ at t=[0-9.]+ s, outside its limits "
                                              r"\[-2\.2, 2\.2\]"):
        controller.set_trajectory(arm_trajectory(names, points), 0.0)
    # the same waypoints at a sane velocity are accepted and followed inside the limits
    v[1] = 1.0
    points[1] = TrajectoryPoint(Q0 + [0, 1.0, 0, 0, 0, 0], v, time_from_start=1.0)
    controller.set_trajectory(arm_trajectory(names, points), 0.0)
    peak = max(controller.update(t, names, Q0, np.zeros(6)).desired_q[1]
               for t in np.linspace(0.0, 1.5, 301))
    assert 1.69 < peak <= 2.2


def test_path_may_return_from_outside_the_limits_but_not_go_further(arm_model):
    names = arm_model.joint_names
    q = Q0.copy()
    q[1] = 2.21  # the arm sagged a little past its stop
    controller = fresh(arm_model)
    controller.update(0.0, names, q, np.zeros(6))
    controller.set_trajectory(arm_trajectory(names, [TrajectoryPoint(Q0, time_from_start=1.0)]),
                              0.0)
    assert_still_controls(controller, names, 0.5)


def test_continuous_joints_are_not_limited(arm_model):
    names = arm_model.joint_names
    v = np.zeros(6)
    v[5] = 50.0  # wrist_3 is continuous
    points = [TrajectoryPoint(Q0, np.zeros(6), time_from_start=0.5),
              TrajectoryPoint(Q0 + [0, 0, 0, 0, 0, 1.0], v, time_from_start=1.0)]
    # ends moving (JTC refuses that by default): only the path limits are under test here
    started(arm_model, allow_nonzero_velocity_at_trajectory_end=True).set_trajectory(
        arm_trajectory(names, points), 0.0)


# --- states lacking joints: hold, not zero; uncommanded joints filled -----------------------
# Before: swapping to a robot whose wrist_3 was renamed wrist_X gave zero effort instead of
# the configured hold, and a gravity-loaded arm would drop.

def renamed(arm_urdf):
    return load_urdf(arm_urdf.replace('"wrist_3"', '"wrist_X"'))


@pytest.mark.parametrize("safe_action", ["hold", "zero"])
def test_renamed_joint_gives_the_configured_safe_action_with_a_reason(arm_urdf, arm_model,
                                                                      safe_action):
    names = arm_model.joint_names
    controller = started(arm_model, safe_action=safe_action)
    controller.set_model(renamed(arm_urdf))
    command = controller.update(0.01, names, Q0, np.zeros(6))
    assert command.mode == f"safe_{safe_action}"
    assert "wrist_X" in command.reason
    expected = gravity(controller.model, np.r_[Q0[:5], 0.0]) if safe_action == "hold" else 0.0
    np.testing.assert_allclose(command.tau, expected, atol=1e-9)
    if safe_action == "hold":
        assert np.linalg.norm(command.tau) > 10.0  # the arm is held, not dropped
    # between states the watchdog gives the same safe command, not zero effort
    safe = controller.check_watchdog(20.0)
    np.testing.assert_allclose(safe.tau, command.tau, atol=1e-9)


def test_missing_commanded_joint_holds_its_last_measured_position(arm_model):
    names = arm_model.joint_names
    controller = started(arm_model)
    command = controller.update(0.01, names[:5], Q0[:5] + 0.01, np.zeros(5))
    assert command.mode == "safe_hold"
    np.testing.assert_allclose(command.desired_q, np.r_[Q0[:5] + 0.01, Q0[5]])
    np.testing.assert_allclose(command.tau, gravity(arm_model, np.r_[Q0[:5] + 0.01, Q0[5]]))
    # the state is not valid for control: it does not feed the watchdog or take a trajectory
    with pytest.raises(TrajectoryError):
        controller.set_trajectory(arm_trajectory(names, [TrajectoryPoint(Q0, time_from_start=1)]),
                                  20.0)


def test_repeated_missing_joint_states_are_one_line_with_a_count(arm_model):
    names = arm_model.joint_names
    controller = started(arm_model)
    controller.warnings.due(0.0)
    lines = []
    for k in range(3000):
        now = 0.001 * (k + 1)
        controller.update(now, names[:5], Q0[:5], np.zeros(5))
        lines += controller.warnings.due(now)
    assert 3 <= len(lines) <= 5, lines
    assert "state is missing joints ['wrist_3']" in lines[0]
    assert "in the last 1.0 s)" in lines[1]
    # a good state returns control
    assert controller.update(3.1, names, Q0, np.zeros(6)).mode == "feedforward_pd"


def test_uncommanded_joint_missing_from_states_uses_fixed_position_and_warns_once(arm_model):
    names = arm_model.joint_names
    controller = fresh(arm_model, joints=names[:5], fixed_positions={"wrist_3": 0.4})
    for k in range(3):
        command = controller.update(0.001 * k, names[:5], Q0[:5], np.zeros(5))
        assert command.mode == "feedforward_pd"
        np.testing.assert_allclose(command.feedforward,
                                   gravity(arm_model, np.r_[Q0[:5], 0.4])[:5], atol=1e-9)
        lines = controller.warnings.due(0.001 * k)
        assert lines == (["joint states lack wrist_3 (not commanded); using 0.4 rad or m for it, "
                          "velocity 0"] if k == 0 else [])
    # without fixed_positions: the URDF zero
    command = fresh(arm_model, joints=names[:5]).update(0.0, names[:5], Q0[:5], np.zeros(5))
    np.testing.assert_allclose(command.feedforward, gravity(arm_model, np.r_[Q0[:5], 0.0])[:5],
                               atol=1e-9)


def test_fixed_positions_for_a_joint_the_robot_lacks_is_ignored_with_a_warning(arm_model):
    controller = fresh(arm_model, fixed_positions={"torso": 0.1})
    assert any("torso" in line for line in controller.warnings.due(0.0))


# --- one error type per layer; throttled warnings -------------------------------------------

def test_every_refusal_is_a_control_error_and_an_rbd_error():
    for error in (ConfigError, StateError, MissingJointsError, TrajectoryError):
        assert issubclass(error, ControlError) and issubclass(error, RbdError)


def test_throttle_reports_first_at_once_then_one_counted_line_per_period():
    warnings = ThrottledWarnings(period=1.0)
    lines = []
    for k in range(3000):
        now = k * 0.001
        warnings.warn("rejected", f"trajectory rejected: reason {k}")
        lines += warnings.due(now)
    assert lines[0] == "trajectory rejected: reason 0"
    assert lines[1] == "trajectory rejected: reason 1000 (x 1000 in the last 1.0 s)"
    assert len(lines) == 3
    # a quiet period forgets the key: the next occurrence is news again, at once
    assert warnings.due(3.0) == ["trajectory rejected: reason 2999 (x 999 in the last 1.0 s)"]
    assert warnings.due(4.5) == []
    warnings.warn("rejected", "again")
    assert warnings.due(4.6) == ["again"]


def test_throttle_keys_are_bounded():
    warnings = ThrottledWarnings()
    for k in range(10_000):
        warnings.warn(f"key{k}", f"message {k}")
        warnings.once(f"once{k}", f"once {k}")
    assert len(warnings.due(0.0)) <= 2 * 256 + 1


# --- long trajectories: the per-point work beside the control loop -------------------------
# Before: a 10k-point trajectory took longer to process than state_timeout on the control
# thread, so it was refused as "joint states are stale" and could never be accepted.

def long_trajectory(names, points=10_000):
    t = np.linspace(0.1, 100.0, points)
    path = Q0 + 0.3 * np.sin(np.outer(t, np.ones(6)) * 0.3)
    velocities = np.gradient(path, t, axis=0)
    velocities[-1] = 0.0    # comes to rest at the end, as JTC requires by default
    return JointTrajectory(names, [TrajectoryPoint(p, v, time_from_start=tk)
                                   for p, v, tk in zip(path, velocities, t)])


def test_long_trajectory_checked_while_states_keep_arriving_is_accepted(arm_model):
    names = arm_model.joint_names
    controller = started(arm_model, state_timeout=0.1)
    traj = long_trajectory(names)
    goal = controller.check_trajectory(traj, 0.05)      # e.g. on a worker thread ...
    for now in (0.1, 0.2, 0.3):                         # ... while the loop keeps running
        controller.update(now, names, Q0, np.zeros(6))
    controller.install_trajectory(goal, 0.35)
    command = controller.update(0.36, names, Q0, np.zeros(6))
    assert not command.holding and np.all(np.isfinite(command.tau))
    # the same work done on the control thread, no state meanwhile: honestly stale
    with pytest.raises(TrajectoryError, match="stale"):
        controller.install_trajectory(controller.check_trajectory(traj, 0.36), 0.5)


def test_checked_goal_is_refused_if_the_model_changed_before_install(arm_urdf, arm_model):
    names = arm_model.joint_names
    controller = started(arm_model)
    goal = controller.check_trajectory(long_trajectory(names, 100), 0.0)
    controller.set_model(load_urdf(arm_urdf))
    controller.update(0.01, names, Q0, np.zeros(6))
    with pytest.raises(TrajectoryError, match="robot model changed"):
        controller.install_trajectory(goal, 0.02)
    goal = controller.check_trajectory(long_trajectory(names, 100), 0.02)
    controller.install_trajectory(goal, 0.03)
    assert not controller.update(0.04, names, Q0, np.zeros(6)).holding
