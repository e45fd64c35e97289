"""Path and goal tolerances with joint_trajectory_controller's rules
(control/trajectory/tolerances.py)."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.control.trajectory.tolerances import (GOAL_VIOLATED, PATH_VIOLATED, RUNNING,
                                                       SUCCEEDED, JointTolerance, ToleranceError,
                                                       check, default_tolerances,
                                                       resolve_tolerance, tolerances_from_goal)

JOINTS = ["joint1", "joint2", "joint3"]
Z = np.zeros(3)


@pytest.fixture()
def defaults():
    return default_tolerances(JOINTS, trajectory={"joint1": 0.1, "joint2": 0.2},
                              goal={"joint1": 0.01, "joint3": 0.03},
                              stopped_velocity_tolerance=0.02, goal_time=0.5)


def test_defaults_come_from_the_constraints_parameters(defaults):
    np.testing.assert_allclose(defaults.path.position, [0.1, 0.2, 0.0])
    np.testing.assert_allclose(defaults.path.velocity, 0.0)
    np.testing.assert_allclose(defaults.goal.position, [0.01, 0.0, 0.03])
    np.testing.assert_allclose(defaults.goal.velocity, 0.02)   # stopped_velocity_tolerance
    assert defaults.goal_time == 0.5


def test_without_parameters_only_stopped_velocity_is_checked():
    t = default_tolerances(JOINTS)
    assert not np.any(t.path.position) and not np.any(t.goal.position)
    np.testing.assert_allclose(t.goal.velocity, 0.01)
    assert t.goal_time == 0.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(trajectory={"joint9": 0.1}), "constraints.joint9.trajectory"),
    (dict(goal={"joint1": -0.1}), "constraints.joint1.goal must be a finite number >= 0"),
    (dict(stopped_velocity_tolerance=float("nan")), "stopped_velocity_tolerance"),
    (dict(goal_time=-1.0), "constraints.goal_time"),
])
def test_bad_parameters_are_refused_with_their_name(kwargs, match):
    with pytest.raises(ToleranceError, match=match):
        default_tolerances(JOINTS, **kwargs)


@pytest.mark.parametrize("default, requested, expected", [
    (0.5, 0.2, 0.2),     # positive: replaces
    (0.5, 0.0, 0.5),     # 0: unspecified, the default
    (0.5, -1.0, 0.0),    # -1: erased, no limit
    (0.0, 0.3, 0.3),
])
def test_resolve_tolerance(default, requested, expected):
    assert resolve_tolerance(default, requested, "x") == expected


@pytest.mark.parametrize("requested", [-0.5, -2.0, float("nan"), float("inf")])
def test_illegal_requested_values_are_errors(requested):
    # JTC logs "Illegal tolerance value" and falls back to its defaults; we refuse
    with pytest.raises(ToleranceError, match="x"):
        resolve_tolerance(0.1, requested, "x")


def test_goal_tolerances_override_the_defaults(defaults):
    active = tolerances_from_goal(
        defaults, JOINTS,
        path_tolerance=[JointTolerance("joint2", position=-1.0, velocity=0.5)],
        goal_tolerance=[JointTolerance("joint3", position=0.0, velocity=0.1),
                        JointTolerance("joint1", position=0.02)],
        goal_time_tolerance=2.0)
    np.testing.assert_allclose(active.path.position, [0.1, 0.0, 0.0])
    np.testing.assert_allclose(active.path.velocity, [0.0, 0.5, 0.0])
    np.testing.assert_allclose(active.goal.position, [0.02, 0.0, 0.03])
    np.testing.assert_allclose(active.goal.velocity, [0.02, 0.02, 0.1])
    assert active.goal_time == 2.0
    # the defaults themselves are untouched
    np.testing.assert_allclose(defaults.path.position, [0.1, 0.2, 0.0])


def test_goal_time_tolerance_zero_keeps_and_minus_one_erases(defaults):
    assert tolerances_from_goal(defaults, JOINTS, goal_time_tolerance=0.0).goal_time == 0.5
    assert tolerances_from_goal(defaults, JOINTS, goal_time_tolerance=-1.0).goal_time == 0.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(path_tolerance=[JointTolerance("elbow", 0.1)]), "path_tolerance names joint 'elbow'"),
    (dict(goal_tolerance=[JointTolerance("joint1", velocity=-3.0)]),
     "goal_tolerance joint1.velocity"),
    (dict(goal_time_tolerance=-2.0), "goal_time_tolerance"),
])
def test_bad_goal_tolerances_are_errors_naming_the_field(defaults, kwargs, match):
    with pytest.raises(ToleranceError, match=match):
        tolerances_from_goal(defaults, JOINTS, **kwargs)


# --- the verdict per control step --------------------------------------------------------

def test_path_tolerance_is_checked_before_the_last_point(defaults):
    within = check(defaults, 0.5, 1.0, np.array([0.09, -0.19, 5.0]), Z, JOINTS)
    assert within.status == RUNNING and not within.done
    outside = check(defaults, 0.5, 1.0, np.array([0.0, -0.21, 0.0]), Z, JOINTS)
    assert outside.status == PATH_VIOLATED
    assert "joint joint2 position error -0.21 exceeds 0.2" in outside.message


def test_path_velocity_tolerance(defaults):
    active = tolerances_from_goal(defaults, JOINTS,
                                  path_tolerance=[JointTolerance("joint3", velocity=0.5)])
    verdict = check(active, 0.5, 1.0, Z, np.array([0.0, 0.0, 0.6]), JOINTS)
    assert verdict.status == PATH_VIOLATED and "joint3 velocity error 0.6" in verdict.message


def test_succeeds_at_the_end_within_goal_tolerance_and_stopped(defaults):
    verdict = check(defaults, 1.0, 1.0, np.array([0.005, 1.0, -0.02]), np.full(3, 0.01), JOINTS)
    assert verdict.status == SUCCEEDED and verdict.message == "Goal successfully reached!"


def test_not_stopped_is_not_succeeded(defaults):
    verdict = check(defaults, 1.0, 1.0, Z, np.array([0.0, 0.03, 0.0]), JOINTS)
    assert verdict.status == RUNNING


def test_outside_goal_tolerance_waits_goal_time_then_aborts(defaults):
    error = np.array([0.02, 0.0, 0.0])
    assert check(defaults, 1.4, 1.0, error, Z, JOINTS).status == RUNNING
    verdict = check(defaults, 1.6, 1.0, error, Z, JOINTS)
    assert verdict.status == GOAL_VIOLATED
    assert verdict.message.startswith("Aborted due to goal_time_tolerance exceeding by 0.1")
    assert "joint joint1 position error 0.02 exceeds 0.01" in verdict.message


def test_goal_time_zero_waits_as_long_as_it_takes(defaults):
    active = tolerances_from_goal(defaults, JOINTS, goal_time_tolerance=-1.0)
    assert check(active, 1e6, 1.0, np.array([0.02, 0.0, 0.0]), Z, JOINTS).status == RUNNING


def test_path_tolerance_is_not_checked_after_the_end_except_on_the_first_sample(defaults):
    error = np.array([0.005, 0.5, 0.0])          # joint2 beyond its path tolerance only
    assert check(defaults, 2.0, 1.0, error, Z, JOINTS).status == SUCCEEDED
    assert check(defaults, 2.0, 1.0, error, Z, JOINTS, first_sample=True).status == PATH_VIOLATED


def test_zero_tolerances_are_not_checked():
    t = default_tolerances(JOINTS, stopped_velocity_tolerance=0.0)
    assert check(t, 0.5, 1.0, np.full(3, 100.0), np.full(3, 100.0), JOINTS).status == RUNNING
    assert check(t, 1.5, 1.0, np.full(3, 100.0), np.full(3, 100.0), JOINTS).status == SUCCEEDED
