"""joint_trajectory_controller's (jazzy) documented trajectory behaviour, ported to our core.

Each case restates one of ros2_controllers' joint_trajectory_controller test cases
(test_trajectory.cpp, test_trajectory_controller.cpp, test_trajectory_actions.cpp) against
rbd_control.control: the same trajectory, the same expected samples or verdict. Where our
controller deliberately differs, the case asserts our behaviour and names the difference
(the list of deviations is in the README).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_control.control import (Controller, ControllerConfig, JointTrajectory, StateError,
                                 TrajectoryPoint)
from rbd_control.control.errors import InvalidJointsError, OldTrajectoryError, TrajectoryError
from rbd_control.control.trajectory.plan import plan_segments
from rbd_control.control.trajectory.validation import validate

EPS = 1e-8


def one_joint_piece(points, now=0.0, start_time=0.0, allow_moving_end=False, current=0.0):
    """Validate and plan a one-joint trajectory; the current desired state is at rest."""
    traj = JointTrajectory(["j"], points, start_time=start_time)
    checked = validate(traj, ["j"], now, allow_nonzero_end_velocity=allow_moving_end)
    z = np.zeros(1)
    return plan_segments(checked, now, np.array([current]), z, z.copy(), z.copy())


def sample(piece, t):
    out = [np.empty(piece.final_positions.size) for _ in range(4)]
    piece.sample(t, *out)
    return [float(v[0]) for v in out]


def point(q, v=None, a=None, t=0.0):
    return TrajectoryPoint([q], None if v is None else [v], None if a is None else [a],
                           time_from_start=t)


# --- TestTrajectory (test_trajectory.cpp) -------------------------------------------------

def test_sample_trajectory_positions():
    # positions only: linear between points; past the last point its position is held.
    # (JTC's case starts from the state before the message at t=0; here that state is the
    # trajectory's own first point, see test_first_point_in_the_future_is_blended below.)
    piece = one_joint_piece([point(0.0, t=0.0), point(1.0, t=1.0), point(2.0, t=2.0),
                             point(3.0, t=3.0)])
    q, v, a, _ = sample(piece, 0.0)
    assert (q, v, a) == pytest.approx((0.0, 1.0, 0.0), abs=EPS)
    q, v, a, _ = sample(piece, 0.5)
    assert (q, v, a) == pytest.approx((0.5, 1.0, 0.0), abs=EPS)
    assert sample(piece, 1.0)[0] == pytest.approx(1.0, abs=EPS)
    assert sample(piece, 1.5)[0] == pytest.approx(1.5, abs=EPS)
    assert sample(piece, 2.5)[0] == pytest.approx(2.5, abs=EPS)
    assert sample(piece, 3.0)[0] == pytest.approx(3.0, abs=EPS)
    q, v, a, _ = sample(piece, 3.125)
    assert (q, v, a) == pytest.approx((3.0, 0.0, 0.0), abs=EPS)


def test_interpolation_pos_vel():
    # x^3 - 2x between s = 0 and s = 2 (t = 1 .. 3): a cubic through both ends' q and v
    piece = one_joint_piece([point(0.0, -2.0, t=1.0), point(4.0, 10.0, t=3.0)],
                            allow_moving_end=True)
    q, v, a, _ = sample(piece, 1.0)
    assert (q, v, a) == pytest.approx((0.0, -2.0, 0.0), abs=EPS)
    q, v, a, _ = sample(piece, 1.0 + math.sqrt(2.0))     # the zero crossing
    assert (q, v, a) == pytest.approx((0.0, 4.0, 6.0 * math.sqrt(2.0)), abs=1e-7)
    q, v, _, _ = sample(piece, 3.0 - 1e-9)
    assert (q, v) == pytest.approx((4.0, 10.0), abs=1e-7)


def test_interpolation_pos_vel_accel():
    # x(x-1)(x-2)(x-3)(x-4) between s = 0 and s = 2: a quintic through q, v and a
    piece = one_joint_piece([point(0.0, 24.0, -100.0, t=1.0), point(0.0, 4.0, 0.0, t=3.0)],
                            allow_moving_end=True)
    q, v, a, _ = sample(piece, 1.0)
    assert (q, v, a) == pytest.approx((0.0, 24.0, -100.0), abs=EPS)
    q, v, a, _ = sample(piece, 2.0)
    assert (q, v, a) == pytest.approx((0.0, -6.0, 10.0), abs=1e-7)
    q, v, a, _ = sample(piece, 3.0 - 1e-9)
    assert (q, v, a) == pytest.approx((0.0, 4.0, 0.0), abs=1e-6)


def test_sample_past_the_end_keeps_the_last_points_velocity_and_acceleration():
    # sample_trajectory_acceleration_with_interpolation, "sample past given points": the
    # desired state past the end is the last point's q, v and a (the issue seen before:
    # the desired velocity and acceleration dropped to 0 there)
    piece = one_joint_piece([point(0.0, 0.0, 0.0, t=0.0), point(1.0, 2.0, -1700.0, t=1.0)],
                            allow_moving_end=True)
    just_before = sample(piece, 1.0 - 1e-9)
    for t in (1.0, 1.125, 5.0):
        q, v, a, _ = sample(piece, t)
        assert (q, v, a) == pytest.approx((1.0, 2.0, -1700.0), abs=EPS)
    assert just_before[1] == pytest.approx(2.0, abs=1e-5)
    assert just_before[2] == pytest.approx(-1700.0, abs=1e-4)


def test_velocity_only_and_acceleration_only_points_are_refused():
    # JTC integrates such points with allow_integration_in_goal_trajectories; we need positions
    for pt in (TrajectoryPoint([], [1.0], time_from_start=1.0),
               TrajectoryPoint([], None, [1.0], time_from_start=1.0)):
        with pytest.raises(TrajectoryError, match="no positions"):
            one_joint_piece([pt])


def test_first_point_in_the_future_is_blended_from_the_current_desired_state():
    # Deviation: JTC interpolates from the current state with the trajectory's own
    # interpolation (linear here, so the desired velocity jumps to 1 at t=0); we blend with a
    # quintic from the current desired q, v, a (no jump), reaching point 1 at t=1 all the same.
    piece = one_joint_piece([point(1.0, t=1.0), point(2.0, t=2.0)])
    q, v, a, _ = sample(piece, 0.0)
    assert (q, v, a) == pytest.approx((0.0, 0.0, 0.0), abs=EPS)
    assert sample(piece, 0.5)[0] == pytest.approx(0.5, abs=EPS)   # symmetric quintic
    assert sample(piece, 1.0)[0] == pytest.approx(1.0, abs=EPS)
    assert sample(piece, 1.5)[:2] == pytest.approx([1.5, 1.0], abs=EPS)


# --- validation (JointTrajectoryController::validate_trajectory_msg) ----------------------

JOINTS = ["joint1", "joint2", "joint3"]


def three(*points, start_time=0.0, names=JOINTS):
    return JointTrajectory(list(names), list(points), start_time=start_time)


def p3(q, v=None, t=1.0):
    return TrajectoryPoint(list(q), None if v is None else list(v), time_from_start=t)


@pytest.mark.parametrize("traj, error, match", [
    (three(p3([1, 2, 3]), names=[]), InvalidJointsError, "no joint names"),
    (three(p3([1, 2, 3]), names=["joint1", "joint2", "joint4"]), InvalidJointsError,
     r"does not command: \['joint4'\]"),
    (three(p3([1, 2]), names=["joint1", "joint2"]), InvalidJointsError,
     "allow_partial_joints_goal is false"),
    (three(), TrajectoryError, "no points"),
    (three(p3([1, 2, 3], t=1.0), p3([1, 2, 3], t=1.0)), TrajectoryError, "strictly increasing"),
    (three(p3([1, 2]), names=JOINTS), TrajectoryError, "2 values for 3 joints"),
    (three(p3([1, 2, 3], [0, 0])), TrajectoryError, "velocities has 2 values"),
    (three(p3([1, 2, 3], [0, 0.1, 0])), TrajectoryError,
     "velocity of the last point is not zero for joint joint2"),
    (three(p3([1, 2, 3]), start_time=5.0), OldTrajectoryError, "ends in the past"),
])
def test_invalid_messages_are_rejected_with_the_reason(traj, error, match):
    with pytest.raises(error, match=match):
        validate(traj, JOINTS, now=10.0)


def test_nonzero_end_velocity_is_accepted_when_allowed():
    checked = validate(three(p3([1, 2, 3], [0, 0.1, 0])), JOINTS, 10.0,
                       allow_nonzero_end_velocity=True)
    assert checked.velocities[-1][1] == 0.1


def test_end_velocity_below_float_epsilon_counts_as_zero():
    validate(three(p3([1, 2, 3], [0, 1e-8, 0])), JOINTS, 10.0)


def test_jumbled_joint_order_is_mapped_by_name():
    checked = validate(three(p3([3, 1, 2]), names=["joint3", "joint1", "joint2"]), JOINTS, 0.0)
    assert list(checked.index) == [2, 0, 1]


def test_partial_joint_list_when_allowed():
    checked = validate(three(p3([1, 2]), names=["joint2", "joint1"]), JOINTS, 0.0,
                       allow_partial=True)
    assert list(checked.index) == [1, 0]


def test_partially_old_trajectory_starts_where_it_is_now():
    # test_ignore_partial_old_trajectory: points already in the past are skipped
    piece = one_joint_piece([point(0.0, t=0.0), point(1.0, t=1.0), point(2.0, t=2.0)],
                            now=10.5, start_time=9.0)
    assert sample(piece, 10.5)[0] == pytest.approx(1.5, abs=EPS)


# --- the controller (test_trajectory_controller.cpp, test_trajectory_actions.cpp) ----------

@pytest.fixture()
def controller(arm_model):
    c = Controller(arm_model, ControllerConfig(mode="feedforward_pd", state_timeout=0.1))
    c.update(0.0, arm_model.joint_names, np.zeros(arm_model.nq), np.zeros(arm_model.nq))
    return c


def step_to(controller, arm_model, t0, t1, dt=0.01):
    """Feed states at the desired pose (a perfect plant) from t0 to t1."""
    command = None
    for t in np.arange(t0, t1 + 1e-12, dt):
        q = command.desired_q if command is not None else np.zeros(arm_model.nq)
        command = controller.update(float(t), arm_model.joint_names, q, np.zeros(arm_model.nq))
    return command


def test_hold_on_startup(controller, arm_model):
    command = controller.update(0.01, arm_model.joint_names, np.full(arm_model.nq, 0.2),
                                np.zeros(arm_model.nq))
    assert command.holding
    np.testing.assert_allclose(command.desired_q, 0.0)   # the first state's pose


def test_controller_rejects_a_moving_end_unless_configured(arm_model):
    names = list(arm_model.joint_names)
    traj = JointTrajectory(names, [TrajectoryPoint([0.1] * 6, [0.0] * 5 + [0.3],
                                                   time_from_start=0.5)])
    c = Controller(arm_model, ControllerConfig(state_timeout=1.0))
    c.update(0.0, names, np.zeros(6), np.zeros(6))
    with pytest.raises(TrajectoryError, match="allow_nonzero_velocity_at_trajectory_end"):
        c.set_trajectory(traj, 0.0)
    c = Controller(arm_model, ControllerConfig(state_timeout=1.0,
                                               allow_nonzero_velocity_at_trajectory_end=True))
    c.update(0.0, names, np.zeros(6), np.zeros(6))
    c.set_trajectory(traj, 0.0)
    after = c.update(0.6, names, np.full(6, 0.1), np.zeros(6))
    np.testing.assert_allclose(after.desired_qd, [0.0] * 5 + [0.3])


def test_execute_trajectory_in_the_future_reaches_its_first_point_at_its_time(controller,
                                                                              arm_model):
    # test_execute_partial_traj_in_future: the start stamp lies ahead; the segment from the
    # state before the trajectory runs from now to the first point's time (start + 0.5 s)
    names = list(arm_model.joint_names)
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint([0.2] * 6, time_from_start=0.5)], start_time=1.0),
        0.0)
    command = step_to(controller, arm_model, 0.01, 0.75)
    np.testing.assert_allclose(command.desired_q, 0.1, atol=1e-12)   # halfway at half time
    command = step_to(controller, arm_model, 0.76, 1.6)
    np.testing.assert_allclose(command.desired_q, 0.2, atol=1e-12)


def test_an_old_trajectory_is_refused_and_the_running_one_goes_on(controller, arm_model):
    names = list(arm_model.joint_names)
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint([0.3] * 6, time_from_start=1.0)]), 0.0)
    step_to(controller, arm_model, 0.01, 0.5)
    with pytest.raises(OldTrajectoryError):
        controller.set_trajectory(
            JointTrajectory(names, [TrajectoryPoint([0.0] * 6, time_from_start=0.1)],
                            start_time=0.2), 0.5)
    command = step_to(controller, arm_model, 0.51, 1.2)
    np.testing.assert_allclose(command.desired_q, 0.3, atol=1e-12)


def test_angle_wraparound_error_takes_the_short_way(arm_model):
    # JTC wraps the position error of continuous joints to (-pi, pi]
    from rbd_control.control.laws import joint as laws
    error = laws.position_error(np.array([3.1]), np.array([-3.1]), np.array([True]))
    assert error[0] == pytest.approx(6.2 - 2 * math.pi)


# --- states out of order (not a JTC case: our controller runs on the states' stamps) -------

def test_an_older_state_is_ignored_counted_and_the_trajectory_goes_on(controller, arm_model):
    names = list(arm_model.joint_names)
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint([0.3] * 6, time_from_start=1.0)]), 0.0)
    before = step_to(controller, arm_model, 0.01, 0.5)
    for stamp in (0.49, 0.45):
        with pytest.raises(StateError, match="older than the last one"):
            controller.update(stamp, names, before.desired_q, np.zeros(6))
    assert controller.ignored_old_states == 2
    # the next in-order state is 15 ms after the last accepted one: no watchdog trip
    command = controller.update(0.515, names, before.desired_q, np.zeros(6))
    assert not command.holding and controller.trajectory_end_time == pytest.approx(1.0)
    command = step_to(controller, arm_model, 0.52, 1.2)
    np.testing.assert_allclose(command.desired_q, 0.3, atol=1e-12)


def test_a_restarted_clock_carries_the_trajectory_over(controller, arm_model):
    names = list(arm_model.joint_names)
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint([0.3] * 6, time_from_start=1.0)]), 0.0)
    before = step_to(controller, arm_model, 0.01, 0.5)
    # the clock jumps back by far more than state_timeout: a new time base, not a late state
    after = controller.update(0.0, names, before.desired_q, np.zeros(6))
    np.testing.assert_allclose(after.desired_q, before.desired_q, atol=1e-12)
    np.testing.assert_allclose(after.desired_qd, before.desired_qd, atol=1e-12)
    assert controller.ignored_old_states == 0
    assert controller.trajectory_end_time == pytest.approx(0.5)


def test_the_trajectory_generation_tells_a_replaced_motion_from_a_moved_clock(controller,
                                                                              arm_model):
    names = list(arm_model.joint_names)
    seen = [controller.trajectory_generation]
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint([0.3] * 6, time_from_start=1.0)]), 0.0)
    seen.append(controller.trajectory_generation)
    step_to(controller, arm_model, 0.01, 0.5)
    assert controller.trajectory_generation == seen[-1]          # following it changes nothing
    controller.update(0.0, names, np.zeros(6), np.zeros(6))      # clock restart: same motion
    assert controller.trajectory_generation == seen[-1]
    controller.hold(0.01)
    seen.append(controller.trajectory_generation)
    controller.check_watchdog(5.0)                               # stale: the safe action
    seen.append(controller.trajectory_generation)
    assert len(set(seen)) == len(seen)
