"""Trajectory sampling with joint_trajectory_controller semantics (no plant, no dynamics)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_control.control.angles import wrap_to_pi
from rbd_control.control.errors import TrajectoryError
from rbd_control.control.trajectory.message import JointTrajectory, TrajectoryPoint
from rbd_control.control.trajectory.plan import TrajectoryPlan, plan_segments
from rbd_control.control.trajectory.polynomials import PiecewisePolynomial
from rbd_control.control.trajectory.validation import validate

JOINTS = ("a", "b", "c")
LIMITS = np.array([[-2.0, 2.0], [-2.0, 2.0], [-math.inf, math.inf]])
CONTINUOUS = np.array([False, False, True])


def plan_for(traj, now=0.0, current=None, partial=False):
    # these cases are about interpolation: a moving last point is allowed here
    checked = validate(traj, JOINTS, now, allow_partial=partial, position_limits=LIMITS,
                       continuous=CONTINUOUS, allow_nonzero_end_velocity=True)
    n = checked.index.size
    if current is None:
        current = (np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))
    return plan_segments(checked, now, *current, continuous=CONTINUOUS), checked


def sample(piece, t):
    n = piece.final_positions.size
    out = [np.empty(n) for _ in range(4)]
    piece.sample(t, *out)
    return out


def numeric_derivative(piece, t, which, h=1e-6):
    return (sample(piece, t + h)[which] - sample(piece, t - h)[which]) / (2 * h)


def test_positions_only_gives_linear_segments():
    traj = JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], time_from_start=0.0),
                                    TrajectoryPoint([1.0, -1.0, 0.5], time_from_start=2.0)])
    piece, _ = plan_for(traj)
    q, qd, qdd, _ = sample(piece, 0.5)
    np.testing.assert_allclose(q, [0.25, -0.25, 0.125])
    np.testing.assert_allclose(qd, [0.5, -0.5, 0.25])
    np.testing.assert_allclose(qdd, 0.0)


def test_velocities_give_cubic_matching_boundary_conditions():
    traj = JointTrajectory(JOINTS, [
        TrajectoryPoint([0, 0, 0], velocities=[0.3, 0, -0.2], time_from_start=0.0),
        TrajectoryPoint([1.0, 0.5, 0.2], velocities=[0.0, 0.4, 0.1], time_from_start=1.5)])
    piece, _ = plan_for(traj)
    q0, v0, _, _ = sample(piece, 0.0)
    q1, v1, _, _ = sample(piece, 1.5 - 1e-12)
    np.testing.assert_allclose(v0, [0.3, 0, -0.2], atol=1e-9)
    np.testing.assert_allclose(q1, [1.0, 0.5, 0.2], atol=1e-9)
    np.testing.assert_allclose(v1, [0.0, 0.4, 0.1], atol=1e-9)
    # a cubic: the third derivative is constant, acceleration is linear in time
    a = [sample(piece, t)[2] for t in (0.2, 0.7, 1.2)]
    np.testing.assert_allclose(a[1] - a[0], a[2] - a[1], atol=1e-9)


def test_accelerations_give_quintic_matching_boundary_conditions():
    traj = JointTrajectory(JOINTS, [
        TrajectoryPoint([0, 0, 0], [0.1, 0, 0], [0.5, -0.2, 0], time_from_start=0.0),
        TrajectoryPoint([0.8, -0.3, 1.0], [0, 0.2, 0], [-0.4, 0, 0.3], time_from_start=2.0)])
    piece, _ = plan_for(traj)
    q, v, a, _ = sample(piece, 2.0 - 1e-12)
    np.testing.assert_allclose(q, [0.8, -0.3, 1.0], atol=1e-9)
    np.testing.assert_allclose(v, [0, 0.2, 0], atol=1e-9)
    np.testing.assert_allclose(a, [-0.4, 0, 0.3], atol=1e-8)
    _, _, a0, _ = sample(piece, 0.0)
    np.testing.assert_allclose(a0, [0.5, -0.2, 0], atol=1e-12)
    # velocity and acceleration are the derivatives of what is sampled
    for t in (0.3, 1.1, 1.9):
        np.testing.assert_allclose(numeric_derivative(piece, t, 0), sample(piece, t)[1], atol=1e-6)
        np.testing.assert_allclose(numeric_derivative(piece, t, 1), sample(piece, t)[2], atol=1e-5)


def test_first_point_in_future_is_blended_from_current_state():
    traj = JointTrajectory(JOINTS, [TrajectoryPoint([1.0, 0.5, 0.0], time_from_start=1.0)])
    current = (np.array([0.2, 0.0, 0.0]), np.array([0.4, -0.1, 0.0]), np.zeros(3), np.zeros(3))
    piece, _ = plan_for(traj, now=10.0, current=current)
    q, v, _, _ = sample(piece, 10.0)
    np.testing.assert_allclose(q, current[0])
    np.testing.assert_allclose(v, current[1])
    q, v, _, _ = sample(piece, 11.0)
    np.testing.assert_allclose(q, [1.0, 0.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(v, 0.0, atol=1e-12)


def test_start_stamp_in_future_and_zero_means_now():
    pts = [TrajectoryPoint([1.0, 0, 0], time_from_start=1.0)]
    piece, checked = plan_for(JointTrajectory(JOINTS, pts, start_time=0.0), now=5.0)
    assert checked.times[0] == pytest.approx(6.0)
    piece, checked = plan_for(JointTrajectory(JOINTS, pts, start_time=7.0), now=5.0)
    assert checked.times[0] == pytest.approx(8.0)
    assert piece.knots[0] == pytest.approx(5.0)  # blend starts now, ends at 8 s
    np.testing.assert_allclose(sample(piece, 6.5)[0][0], 0.5, atol=1e-12)  # quintic midpoint


def test_after_last_point_its_position_and_velocity_are_kept():
    # JTC: past the end the sample is the last point (accelerations not given -> 0)
    traj = JointTrajectory(JOINTS, [
        TrajectoryPoint([0, 0, 0], [1, 1, 1], time_from_start=0.0),
        TrajectoryPoint([1, 1, 1], [0.5, 0.5, 0.5], time_from_start=1.0)])
    piece, _ = plan_for(traj)
    q, v, a, _ = sample(piece, 3.0)
    np.testing.assert_allclose(q, [1, 1, 1])
    np.testing.assert_allclose(v, 0.5)
    np.testing.assert_allclose(a, 0.0)


def test_start_in_past_samples_mid_trajectory():
    traj = JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], time_from_start=0.0),
                                    TrajectoryPoint([2, 0, 0], time_from_start=2.0)],
                           start_time=9.0)
    piece, _ = plan_for(traj, now=10.0)
    assert sample(piece, 10.0)[0][0] == pytest.approx(1.0)


def test_effort_is_interpolated():
    traj = JointTrajectory(JOINTS, [
        TrajectoryPoint([0, 0, 0], effort=[0, 2, 4], time_from_start=0.0),
        TrajectoryPoint([0, 0, 0], effort=[2, 2, 0], time_from_start=1.0)])
    piece, _ = plan_for(traj)
    np.testing.assert_allclose(sample(piece, 0.5)[3], [1, 2, 2])


@pytest.mark.parametrize("traj, match", [
    (JointTrajectory(JOINTS, []), "no points"),
    (JointTrajectory([], [TrajectoryPoint([])]), "no joint names"),
    (JointTrajectory(("a", "a", "b"), [TrajectoryPoint([0, 0, 0], time_from_start=1)]),
     "duplicate"),
    (JointTrajectory(("a", "b", "zz"), [TrajectoryPoint([0, 0, 0], time_from_start=1)]), "zz"),
    (JointTrajectory(("a", "b"), [TrajectoryPoint([0, 0], time_from_start=1)]), "allow_partial"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0], time_from_start=1)]),
     "2 values for 3 joints"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], time_from_start=1),
                              TrajectoryPoint([0, 0, 0], time_from_start=1)]),
     "strictly increasing"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], time_from_start=2),
                              TrajectoryPoint([0, 0, 0], time_from_start=1)]),
     "strictly increasing"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], time_from_start=-1)]), "negative"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], time_from_start=1)], start_time=5.0),
     "past"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, math.nan, 0], time_from_start=1)]), "NaN"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], [0, 0, 0], time_from_start=1),
                              TrajectoryPoint([0, 0, 0], time_from_start=2)]), "velocities"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, 0], accelerations=[0, 0, 0],
                                              time_from_start=1)]),
     "without velocities"),
    (JointTrajectory(JOINTS, [TrajectoryPoint([0, 2.5, 0], time_from_start=1)]),
     "outside its limits"),
])
def test_rejections_name_the_problem(traj, match):
    with pytest.raises(TrajectoryError, match=match):
        validate(traj, JOINTS, 10.0, position_limits=LIMITS, continuous=CONTINUOUS)


def test_continuous_joint_may_exceed_limits_and_is_unwrapped_to_shortest_way():
    # current desired wrist is at 3.0 rad; a goal of -3.0 is 0.28 rad away going forward
    traj = JointTrajectory(JOINTS, [TrajectoryPoint([0, 0, -3.0], time_from_start=1.0)])
    current = (np.array([0, 0, 3.0]), np.zeros(3), np.zeros(3), np.zeros(3))
    piece, _ = plan_for(traj, current=current)
    end = sample(piece, 2.0)[0][2]
    assert end == pytest.approx(-3.0 + 2 * math.pi)
    assert wrap_to_pi(end - (-3.0)) == pytest.approx(0.0, abs=1e-12)


def test_joints_in_any_order_map_to_controller_order():
    traj = JointTrajectory(("c", "a", "b"),
                           [TrajectoryPoint([0.3, 0.1, 0.2], time_from_start=1.0)])
    checked = validate(traj, JOINTS, 0.0, position_limits=LIMITS, continuous=CONTINUOUS)
    plan = TrajectoryPlan(3)
    plan.hold([0, 0, 0])
    piece = plan_segments(checked, 0.0, *(np.zeros(3) for _ in range(4)), continuous=CONTINUOUS)
    plan.replace(piece, checked.index)
    np.testing.assert_allclose(plan.sample(5.0)[0], [0.1, 0.2, 0.3])


def test_partial_goal_keeps_other_joints_on_their_trajectory():
    plan = TrajectoryPlan(3)
    plan.hold([0, 0, 0])
    full = JointTrajectory(JOINTS, [TrajectoryPoint([1, 1, 1], time_from_start=2.0)])
    checked = validate(full, JOINTS, 0.0)
    plan.replace(plan_segments(checked, 0.0, *(v[checked.index].copy() for v in plan.sample(0.0))),
                 checked.index)
    expected_b = plan.sample(1.5)[0][1]
    partial = JointTrajectory(("a",), [TrajectoryPoint([-1.0], time_from_start=1.0)])
    checked = validate(partial, JOINTS, 1.0, allow_partial=True)
    plan.replace(plan_segments(checked, 1.0, *(v[checked.index].copy() for v in plan.sample(1.0))),
                 checked.index)
    q = plan.sample(1.5)[0]
    assert q[1] == pytest.approx(expected_b)  # b still follows the first trajectory
    np.testing.assert_allclose(plan.sample(3.0)[0], [-1, 1, 1])


def test_replacement_mid_motion_keeps_desired_position_and_velocity_continuous():
    plan = TrajectoryPlan(3)
    plan.hold([0, 0, 0])
    first = JointTrajectory(JOINTS, [TrajectoryPoint([1, 1, 1], [0, 0, 0], [0, 0, 0],
                                                     time_from_start=2.0)])
    checked = validate(first, JOINTS, 0.0)
    plan.replace(plan_segments(checked, 0.0, *(v.copy() for v in plan.sample(0.0))), checked.index)
    before = [v.copy() for v in plan.sample(1.0)]
    assert abs(before[1][0]) > 0.5  # really mid-motion
    second = JointTrajectory(JOINTS, [TrajectoryPoint([-0.5, 0.2, 0], time_from_start=1.0)])
    checked = validate(second, JOINTS, 1.0)
    plan.replace(plan_segments(checked, 1.0, *(v.copy() for v in plan.sample(1.0))), checked.index)
    after = plan.sample(1.0)
    np.testing.assert_allclose(after[0], before[0], atol=1e-12)
    np.testing.assert_allclose(after[1], before[1], atol=1e-12)
    np.testing.assert_allclose(after[2], before[2], atol=1e-12)


def test_pure_hold():
    piece = PiecewisePolynomial.hold([0.1, 0.2])
    q, v, a, e = sample(piece, 123.0)
    np.testing.assert_allclose(q, [0.1, 0.2])
    assert not np.any(v) and not np.any(a) and not np.any(e)


def test_hold_sampled_before_its_knot_still_holds():
    # the controller's clock may step back (simulation reset); a hold must not break
    piece = PiecewisePolynomial.hold([0.1, 0.2], time=5.0)
    np.testing.assert_allclose(sample(piece, 1.0)[0], [0.1, 0.2])
