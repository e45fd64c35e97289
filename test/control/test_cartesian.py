"""cartesian_impedance without a simulator: quaternions, the target profile, the law's parts and
the Controller API (errors, replacement without jumps, wrench ramp, watchdog, mode switches)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rbd_control.control import ConfigError, Controller, ControllerConfig, TrajectoryError
from rbd_control.control.laws.cartesian import WRENCH_RAMP_TIME
from rbd_control.control.laws.loop_design import design_bandwidth
from rbd_control.control.laws.pose import (
    MAX_LINEAR_SPEED,
    MIN_DURATION,
    PoseFilter,
    PoseInterpolation,
    minimum_jerk,
    orientation_error,
    quat_from_matrix,
    slerp,
)
from rbd_control.dynamics import bias, frame_jacobian, gravity, operational_space_inertia

Q0 = np.array([0.0, 0.6, -0.9, 0.4, 0.3, 0.0])


def make(arm_model, **config):
    controller = Controller(arm_model, ControllerConfig(mode="cartesian_impedance",
                                                        ee_link="tool0", **config))
    controller.update(0.0, arm_model.joint_names, Q0, np.zeros(6))
    return controller


def test_quaternion_from_matrix_matches_scipy_on_random_rotations():
    for R in Rotation.random(200, random_state=1):
        ours = quat_from_matrix(R.as_matrix())
        reference = R.as_quat()   # x, y, z, w
        assert min(np.abs(ours - reference).max(), np.abs(ours + reference).max()) < 1e-12


def test_orientation_error_is_the_rotation_vector_for_small_angles_and_sign_blind():
    R = Rotation.from_rotvec([0.3, -0.2, 0.5])
    small = Rotation.from_rotvec([1e-4, -2e-4, 3e-4]) * R
    q, q_d = R.as_quat(), small.as_quat()
    np.testing.assert_allclose(orientation_error(q_d, q), [1e-4, -2e-4, 3e-4], atol=1e-10)
    np.testing.assert_allclose(orientation_error(-q_d, q), orientation_error(q_d, q), atol=1e-15)


def test_slerp_and_minimum_jerk_end_points():
    a, b = Rotation.random(2, random_state=2).as_quat()
    np.testing.assert_allclose(slerp(a, b, 0.0), a, atol=1e-12)
    assert min(np.abs(slerp(a, b, 1.0) - b).max(), np.abs(slerp(a, b, 1.0) + b).max()) < 1e-12
    assert minimum_jerk(0.0) == 0.0 and minimum_jerk(1.0) == 1.0 and minimum_jerk(0.5) == 0.5


def test_interpolation_duration_follows_the_speed_rule():
    q = np.array([0.0, 0.0, 0.0, 1.0])
    far = PoseInterpolation([0, 0, 0], q, [0.5, 0, 0], q, 0.0)
    assert far.duration == pytest.approx(1.875 * 0.5 / MAX_LINEAR_SPEED)
    peak = max(np.linalg.norm(far.sample(t + 1e-4)[0] - far.sample(t)[0]) / 1e-4
               for t in np.linspace(0, far.duration, 200))
    assert peak == pytest.approx(MAX_LINEAR_SPEED, rel=1e-3)
    assert PoseInterpolation([0, 0, 0], q, [0.01, 0, 0], q, 0.0).duration == MIN_DURATION


def test_at_rest_on_target_the_command_is_gravity(arm_model):
    controller = make(arm_model)
    command = controller.update(0.001, arm_model.joint_names, Q0, np.zeros(6))
    np.testing.assert_allclose(command.tau, gravity(arm_model, Q0), atol=1e-9)


def test_law_parts_spring_damper_and_wrench(arm_model):
    """tau - (C qd + G) = J^T (K e - D xdot + f_d) for a 6-DoF arm (N = 0 away from
    singularities): checked through J^-T."""
    controller = make(arm_model, cartesian_stiffness=(500, 600, 700, 20, 30, 40))
    wrench = np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.3])
    controller.set_wrench_target(wrench, 0.0)
    q = Q0 + 0.01
    for t in np.arange(0.001, WRENCH_RAMP_TIME + 0.01, 0.001):   # states keep coming
        command = controller.update(t, arm_model.joint_names, q, np.zeros(6))
    F = np.linalg.solve(frame_jacobian(arm_model, q, "tool0").T,
                        command.tau - bias(arm_model, q, np.zeros(6)))
    state = controller.cartesian_state
    law = controller._cartesian
    # the stiffness in force at this state, its fast modes bounded (cartesian.py)
    K, _ = law.task_gains(operational_space_inertia(arm_model, q, "tool0").Lambda)
    assert 0.0 < law.stiffness_scale <= 1.0
    # K acts on e = [e_o; e_p] and gives [moment; force]; error and wrench are translation first
    e = np.concatenate([state.error[3:], state.error[:3]])
    np.testing.assert_allclose(F, K @ e + np.concatenate([wrench[3:], wrench[:3]]), atol=1e-6)


def test_replacing_a_pose_target_mid_motion_moves_the_target_continuously(arm_model):
    controller = make(arm_model)
    names = arm_model.joint_names
    p0 = controller.cartesian_state.position
    quat0 = controller.cartesian_state.quaternion_xyzw
    controller.set_pose_target(p0 + [0.2, 0.0, 0.0], quat0, 0.0)
    targets, taus = [], []
    for k in range(1, 3000):
        t = k * 1e-3
        if k == 700:
            controller.set_pose_target(p0 + [0.0, 0.2, -0.1], quat0, t)
        taus.append(controller.update(t, names, Q0, np.zeros(6)).tau)
        targets.append(controller.cartesian_state.target_position)
    steps = np.linalg.norm(np.diff(targets, axis=0), axis=1)
    assert steps[695:705].max() <= 1.01 * MAX_LINEAR_SPEED * 1e-3   # no jump at the switch
    assert np.abs(np.diff(taus, axis=0)).max() < 1.0                 # N m per ms


def test_wrench_target_is_ramped_in(arm_model):
    controller = make(arm_model)
    names = arm_model.joint_names
    controller.set_wrench_target([0, 0, 10.0, 0, 0, 0], 0.0)
    forces = []
    for t in np.arange(0.0, WRENCH_RAMP_TIME + 0.05, 1e-3):
        controller.update(t, names, Q0, np.zeros(6))
        forces.append(controller.cartesian_state.wrench[2])
    assert forces[0] == 0.0 and forces[-1] == 10.0
    assert np.diff(forces).max() < 10.0 * 1.875 * 1e-3 / WRENCH_RAMP_TIME * 1.01


@pytest.mark.parametrize("call, message", [
    (lambda c: c.set_pose_target([0, 0], [0, 0, 0, 1], 0.0), "bad pose target"),
    (lambda c: c.set_pose_target([0, 0, 0.5], [0, 0, 0, 2], 0.0), "unit quaternion"),
    (lambda c: c.set_pose_target([0, math.nan, 0.5], [0, 0, 0, 1], 0.0), "finite"),
    (lambda c: c.set_wrench_target([0, 0, 1], 0.0), "6 finite numbers"),
    (lambda c: c.set_pose_target([0, 0, 0.5], [0, 0, 0, 1], 5.0), "stale"),
])
def test_bad_targets_are_refused_with_a_reason(arm_model, call, message):
    with pytest.raises(TrajectoryError, match=message):
        call(make(arm_model))


def test_targets_need_the_cartesian_mode_and_the_mode_needs_an_ee_link(arm_model):
    joint = Controller(arm_model, ControllerConfig(mode="computed_torque"))
    joint.update(0.0, arm_model.joint_names, Q0, np.zeros(6))
    with pytest.raises(TrajectoryError, match="switch to cartesian_impedance"):
        joint.set_pose_target([0, 0, 0.5], [0, 0, 0, 1], 0.0)
    with pytest.raises(ConfigError, match="ee_link"):
        joint.set_mode("cartesian_impedance", 0.0)
    with pytest.raises(ConfigError, match="ee_link"):
        Controller(arm_model, ControllerConfig(mode="cartesian_impedance"))
    with pytest.raises(ConfigError, match="no_such_link"):
        Controller(arm_model, ControllerConfig(mode="cartesian_impedance", ee_link="no_such_link"))
    with pytest.raises(ConfigError, match="fixed to the base"):
        Controller(arm_model, ControllerConfig(mode="cartesian_impedance", ee_link="base_link"))
    with pytest.raises(ConfigError, match="cartesian_stiffness"):
        ControllerConfig(mode="cartesian_impedance", ee_link="tool0",
                         cartesian_stiffness=(1, 2, 3)).check()
    with pytest.raises(ConfigError, match="max_cartesian_error"):
        ControllerConfig(max_cartesian_error=(0.1, -1)).check()


def test_switching_modes_at_rest_keeps_the_torque(arm_model):
    controller = Controller(arm_model, ControllerConfig(mode="computed_torque", ee_link="tool0"))
    names = arm_model.joint_names
    before = controller.update(0.0, names, Q0, np.zeros(6)).tau
    controller.set_mode("cartesian_impedance", 0.001)
    during = controller.update(0.002, names, Q0, np.zeros(6)).tau
    controller.set_mode("feedforward_pd", 0.003)
    after = controller.update(0.004, names, Q0, np.zeros(6)).tau
    np.testing.assert_allclose(during, before, atol=1e-9)
    np.testing.assert_allclose(after, before, atol=1e-9)


def test_watchdog_applies_and_the_target_is_dropped_after_a_gap(arm_model):
    controller = make(arm_model, state_timeout=0.05)
    names = arm_model.joint_names
    p0 = controller.cartesian_state.position
    controller.set_pose_target(p0 + [0.1, 0, 0], controller.cartesian_state.quaternion_xyzw, 0.0)
    controller.update(0.01, names, Q0, np.zeros(6))
    safe = controller.check_watchdog(0.2)
    assert safe.mode == "safe_hold"
    np.testing.assert_allclose(safe.tau, gravity(arm_model, Q0), atol=1e-9)
    # states resume: it holds where the arm is, the old target is gone
    command = controller.update(0.3, names, Q0, np.zeros(6))
    np.testing.assert_allclose(command.tau, gravity(arm_model, Q0), atol=1e-9)
    np.testing.assert_allclose(controller.cartesian_state.target_position, p0, atol=1e-12)


def test_a_singular_pose_gives_a_finite_clamped_torque(arm_model):
    controller = make(arm_model)
    names = arm_model.joint_names
    stretched = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])   # arm straight up, wrist aligned
    controller.update(0.001, names, stretched, np.full(6, 0.5))
    command = controller.update(0.002, names, stretched, np.full(6, 0.5))
    assert np.all(np.isfinite(command.tau))
    assert np.all(np.abs(command.tau) <= controller._limiter.limit)
    assert controller.cartesian_state.damping > 0.0


def test_the_task_stiffness_is_bounded_by_the_loop_design_bandwidth(arm_model):
    """The fastest task-space mode of Lambda x'' = -sigma K x stays at the discrete-time design
    bandwidth w (loop_design.design_bandwidth) where cartesian_stiffness would exceed it."""
    controller = make(arm_model, cartesian_stiffness=(1000, 1000, 1000, 10, 10, 10))
    law = controller._cartesian
    w = design_bandwidth().omega
    assert law.max_bandwidth == pytest.approx(w)
    Lambda = operational_space_inertia(arm_model, Q0, "tool0").Lambda
    K, D = law.task_gains(Lambda)
    rates = np.sqrt(np.linalg.eigvals(np.linalg.solve(Lambda, K)).real)
    free = np.sqrt(np.linalg.eigvals(np.linalg.solve(Lambda, np.diag(law.K))).real)
    assert law.stiffness_scale < 1.0 and rates.max() == pytest.approx(w, rel=1e-6)
    # only the modes faster than w are softened: the slow ones keep the configured stiffness
    np.testing.assert_allclose(np.sort(rates), np.sort(np.minimum(free, w)), rtol=1e-6)
    unbounded = make(arm_model, cartesian_stiffness=(1000, 1000, 1000, 10, 10, 10),
                     expected_state_period=1e-4, expected_delay=0.0, bandwidth_hz=1000.0)
    K_full, _ = unbounded._cartesian.task_gains(Lambda)
    np.testing.assert_allclose(K_full, np.diag(law.K), atol=1e-9 * law.K.max())


def test_the_task_stiffness_set_while_running_acts_and_a_bad_one_is_refused(arm_model):
    """Variable impedance (a policy's stiffness per target): set_cartesian_stiffness changes
    the spring at the next state; a bad value, or one above what the loop design holds at the
    measured pose, is refused naming the parameter (and the axes), and the stiffness in force
    stays."""
    # the lock-step loop: the default one (a state every 4 ms, 10 ms late) holds 0.68 N m/rad
    # at rz here
    controller = make(arm_model, expected_state_period=0.001, expected_delay=0.001)
    names = arm_model.joint_names
    q = Q0 + 0.01                                   # off the target: the spring pulls
    stiff = controller.update(0.001, names, q, np.zeros(6)).tau.copy()
    controller.set_cartesian_stiffness([100.0] * 3 + [1.0] * 3)
    soft = controller.update(0.002, names, q, np.zeros(6)).tau.copy()
    spring = bias(arm_model, q, np.zeros(6))
    assert np.linalg.norm(soft - spring) < 0.5 * np.linalg.norm(stiff - spring)
    assert controller.config.cartesian_stiffness == [100.0] * 3 + [1.0] * 3
    for bad in ([100.0] * 5, [100.0] * 5 + [-1.0], [100.0] * 5 + [math.nan]):
        with pytest.raises(ConfigError, match="cartesian_stiffness"):
            controller.set_cartesian_stiffness(bad)
    # above the fastest loop's w^2 Lambda_ii at this pose (x: 1.25e+05 N/m)
    with pytest.raises(ConfigError, match=r"above what the loop holds at this pose: x 1e\+06 > "):
        controller.set_cartesian_stiffness([1e6] * 3 + [1.0] * 3)
    assert controller.config.cartesian_stiffness == [100.0] * 3 + [1.0] * 3
    np.testing.assert_allclose(controller.update(0.003, names, q, np.zeros(6)).tau, soft,
                               atol=1e-9)
    # a new model's law takes the stiffness set, not the one at start
    controller.set_model(arm_model)
    assert np.allclose(controller._cartesian.K, [1.0] * 3 + [100.0] * 3)


def test_a_pose_filter_follows_a_stream_without_rest_or_overshoot():
    """pose.py's PoseFilter: each step moves 1 - exp(-dt / T) of the way; a 10 Hz stream of
    1 cm steps moves the target at every state between samples (no rest, as a minimum-jerk
    move per sample would), never past the newest target, and time running back changes
    nothing."""
    q = np.array([0.0, 0.0, 0.0, 1.0])
    f = PoseFilter([0, 0, 0], q, 0.0, 0.05)
    f.retarget([0.01, 0, 0], q, 0.0)
    assert f.sample(0.05)[0][0] == pytest.approx(0.01 * (1 - math.exp(-1.0)))
    assert f.sample(0.04)[0][0] == pytest.approx(0.01 * (1 - math.exp(-1.0)))   # back: kept
    f = PoseFilter([0, 0, 0], q, 0.0, 0.05)
    f.retarget([0.01, 0, 0], q, 0.0)
    xs = []
    for k in range(1, 10):                           # a new target every 0.1 s
        for t in np.arange(0.1 * k - 0.099, 0.1 * k + 1e-9, 0.001):
            xs.append(f.sample(t)[0][0])
            assert xs[-1] <= 0.01 * k + 1e-12        # never past the newest target
        f.retarget([0.01 * (k + 1), 0, 0], q, 0.1 * k)
    assert np.all(np.diff(xs) > 0.0), "the target moves at every state: no rest"


def test_streamed_pose_targets_are_filtered_and_a_stopped_stream_is_said_once(arm_model):
    controller = make(arm_model, cartesian_filter_time_constant=0.05,
                      cartesian_target_timeout=0.5)
    names = arm_model.joint_names
    p0 = controller.cartesian_state.position
    quat = controller.cartesian_state.quaternion_xyzw
    controller.set_pose_target(p0 + [0.02, 0.0, 0.0], quat, 0.0)
    targets = []
    for t in np.arange(0.001, 0.3, 0.001):
        controller.update(t, names, Q0, np.zeros(6))
        targets.append(controller.cartesian_state.target_position[0] - p0[0])
    assert targets[49] == pytest.approx(0.02 * (1 - math.exp(-50 / 50)), rel=1e-3)
    assert max(targets) <= 0.02 + 1e-12
    assert not controller._cartesian.held
    for t in np.arange(0.3, 0.7, 0.001):
        controller.update(t, names, Q0, np.zeros(6))
    assert controller._cartesian.held
    said = [w for w in controller.warnings.due(1.0) if "cartesian_target_timeout" in w]
    assert len(said) == 1, said
    np.testing.assert_allclose(controller.cartesian_state.target_position, p0 + [0.02, 0, 0],
                               atol=1e-6)   # the last target, held
