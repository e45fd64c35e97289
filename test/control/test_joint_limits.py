"""effort_bounds against ros2_control's own cases: joint_limits/test/test_joint_soft_limiter.cpp,
check_desired_effort_only_cases and when_effort_limits_disabled_expect_no_effort_enforcement
(the values and the expected efforts are theirs; each case clamps a desired effort into the
bounds and says whether it was clamped)."""
import math

import numpy as np
import pytest

from rbd_control.control.safety.joint_limits import (SOFT_LIMIT_REACH_VELOCITY, JointLimiter,
                                                     JointLimits, effort_bounds)

HARD = dict(lower=-5.0, upper=5.0, velocity=1.0, effort=200.0)
POSITIONS = (None, 4.0, -4.0)


def enforce(limits, position, velocity, desired):
    lower, upper = effort_bounds(limits, position, velocity)
    return min(max(desired, lower), upper), desired < lower or desired > upper


def check(limits, position, velocity, desired, expected, clamped):
    effort, was_clamped = enforce(limits, position, velocity, desired)
    assert effort == pytest.approx(expected, abs=1e-6), (position, velocity, desired)
    assert was_clamped == clamped, (position, velocity, desired)


def check_within_effort(limits, velocities):
    for position in POSITIONS:
        for velocity in velocities:
            for desired, expected, clamped in ((20.0, 20.0, False), (200.0, 200.0, False),
                                               (201.0, 200.0, True), (0.0, 0.0, False),
                                               (-20.0, -20.0, False), (-200.0, -200.0, False),
                                               (-201.0, -200.0, True)):
                check(limits, position, velocity, desired, expected, clamped)


def test_no_soft_limits_only_the_effort_limit_inside_the_range():
    check_within_effort(JointLimits(**HARD), (None, 0.4, -0.2))


def test_at_or_beyond_a_hard_limit_no_effort_toward_it():
    limits = JointLimits(**HARD)
    for args in ((5.0, 0.0, 20.0, 0.0, True), (5.0, 0.0, 400.0, 0.0, True),
                 (6.0, 0.0, 400.0, 0.0, True), (5.0, 0.0, -20.0, -20.0, False),
                 (5.0, 0.0, -400.0, -200.0, True), (6.0, 0.0, -400.0, -200.0, True),
                 # moving away from the limit: allowed
                 (5.0, -0.2, 400.0, 200.0, True), (5.0, -0.2, -400.0, -200.0, True),
                 (5.0, -0.2, 30.0, 30.0, False), (5.0, -0.2, -30.0, -30.0, False),
                 # moving on into it: saturated
                 (5.0, 0.2, 400.0, 0.0, True), (5.0, 0.2, 30.0, 0.0, True),
                 (5.0, 0.2, -400.0, -200.0, True), (5.0, 0.2, -30.0, -30.0, False),
                 (-5.0, 0.2, 20.0, 20.0, False), (-5.0, 0.2, 400.0, 200.0, True),
                 (-5.0, 0.2, -20.0, -20.0, False), (-5.0, 0.2, -400.0, -200.0, True),
                 (-5.0, -0.2, -400.0, 0.0, True), (-5.0, -0.2, -30.0, 0.0, True),
                 (-5.0, -0.2, 400.0, 200.0, True), (-5.0, -0.2, 30.0, 30.0, False)):
        check(limits, *args)


def test_a_high_k_velocity_leaves_the_hard_limits():
    check_within_effort(JointLimits(**HARD, k_velocity=5000.0), (None, 0.5, -0.2))


def low_k_velocity_cases(limits, positions):
    for position in positions:
        for velocity, cases in (
                (0.5, ((20.0, 20.0, False), (200.0, 150.0, True), (201.0, 150.0, True),
                       (0.0, 0.0, False), (-20.0, -20.0, False), (-200.0, -200.0, False),
                       (-201.0, -200.0, True))),
                (-0.5, ((20.0, 20.0, False), (200.0, 200.0, False), (201.0, 200.0, True),
                        (0.0, 0.0, False), (-20.0, -20.0, False), (-200.0, -150.0, True),
                        (-201.0, -150.0, True)))):
            for case in cases:
                check(limits, position, velocity, *case)


def test_a_low_k_velocity_brakes_near_the_velocity_limit():
    low_k_velocity_cases(JointLimits(**HARD, k_velocity=300.0), POSITIONS)


def test_soft_limits_brake_the_approach():
    limits = JointLimits(**HARD, k_velocity=300.0, k_position=1.0, soft_lower=-4.0,
                         soft_upper=4.0)
    low_k_velocity_cases(limits, (0.0,))
    # close to a soft limit, moving away from it
    for position, velocity in ((-3.5, 0.5),):
        for case in ((20.0, 20.0, False), (200.0, 150.0, True), (201.0, 150.0, True),
                     (0.0, 0.0, False), (-20.0, -20.0, False), (-200.0, -200.0, False),
                     (-201.0, -200.0, True)):
            check(limits, position, velocity, *case)
    for case in ((20.0, 20.0, False), (200.0, 200.0, False), (201.0, 200.0, True),
                 (0.0, 0.0, False), (-20.0, -20.0, False), (-200.0, -150.0, True),
                 (-201.0, -150.0, True)):
        check(limits, 3.5, -0.5, *case)
    # close to a soft limit, moving toward it
    for args in ((3.5, 0.4, 20.0, 20.0, False), (3.5, 0.4, 200.0, 30.0, True),
                 (3.5, 0.5, 200.0, 0.0, True), (3.5, 0.4, 201.0, 30.0, True),
                 (3.5, 0.4, 0.0, 0.0, False), (3.5, 0.4, -20.0, -20.0, False),
                 (3.5, 0.4, -200.0, -200.0, False), (3.5, 0.4, -201.0, -200.0, True),
                 (-3.5, -0.4, 20.0, 20.0, False), (-3.5, -0.4, 200.0, 200.0, False),
                 (-3.5, -0.4, 201.0, 200.0, True), (-3.5, -0.4, 0.0, 0.0, False),
                 (-3.5, -0.4, -20.0, -20.0, False), (-3.5, -0.4, -200.0, -30.0, True),
                 (-3.5, -0.5, -200.0, 0.0, True), (-3.5, -0.4, -201.0, -30.0, True)):
        check(limits, *args)


def test_soft_limits_beyond_the_hard_ones_leave_the_hard_rules():
    soft = dict(k_position=1.0, soft_lower=-10.0, soft_upper=10.0)
    check_within_effort(JointLimits(**HARD, k_velocity=500.0, **soft), (None, 0.5, -0.2))
    low_k_velocity_cases(JointLimits(**HARD, k_velocity=300.0, **soft), POSITIONS)


@pytest.mark.parametrize("k_velocity", [None, 5000.0])
def test_no_effort_limit_no_enforcement(k_velocity):
    """when_effort_limits_disabled_expect_no_effort_enforcement"""
    limits = JointLimits(lower=-5.0, upper=5.0, velocity=1.0, k_velocity=k_velocity)
    cases = [(0.0, 0.0), (5.0, 0.0), (6.0, 0.0), (5.0, 0.2), (-5.0, 0.0), (-5.0, -0.2),
             (0.0, 1.5), (0.0, -1.5)] if k_velocity is None else [(0.0, 0.5), (5.0, 0.2)]
    for position, velocity in cases:
        for desired in (10000.0, -10000.0):
            check(limits, position, velocity, desired, desired, False)


# --- beyond the soft limit: the documented difference (joint_limits.py) ---------------------

def test_beyond_the_soft_limit_a_spring_back_not_a_damper():
    """At rest 0.5 past the soft limit, the upper bound is -k_velocity k_position 0.5 (a
    spring back to the soft limit; ros2_control: -k_velocity 1 deg/s), and the joint may
    still be pulled back hard."""
    limits = JointLimits(**HARD, k_velocity=300.0, k_position=0.5, soft_lower=-4.0,
                         soft_upper=4.0)
    lower, upper = effort_bounds(limits, 4.5, 0.0)
    assert upper == pytest.approx(-300.0 * 0.5 * 0.5)
    assert lower == pytest.approx(-200.0)
    # just past the soft limit: at least the 1 deg/s of ros2_control
    lower, upper = effort_bounds(limits, 4.0 + 1e-6, 0.0)
    assert upper == pytest.approx(-300.0 * SOFT_LIMIT_REACH_VELOCITY)


def test_the_vector_limiter_is_the_function_on_every_joint():
    rng = np.random.default_rng(3)
    joints = [JointLimits(**HARD), JointLimits(**HARD, k_velocity=300.0),
              JointLimits(**HARD, k_velocity=300.0, k_position=1.0, soft_lower=-4.0,
                          soft_upper=4.0),
              JointLimits(velocity=2.0, effort=10.0, k_velocity=3.0),
              JointLimits(lower=-1.0, upper=1.0, velocity=1.0)]
    limiter = JointLimiter.of(joints)
    for _ in range(200):
        q, qd = rng.uniform(-6, 6, len(joints)), rng.uniform(-2, 2, len(joints))
        lower, upper = limiter.bounds(q, qd)
        for j, lim in enumerate(joints):
            assert (lower[j], upper[j]) == effort_bounds(lim, q[j], qd[j])
            assert lower[j] <= upper[j]
            if not math.isinf(upper[j]):
                assert -lim.effort <= lower[j] and upper[j] <= lim.effort


# --- about the bias: the controller's model term (joint_limits.py) --------------------------

def test_braking_is_about_the_bias_and_accelerating_never_narrower():
    """Above the allowed velocity the bound is bias + k_brake (v - qd), whatever the bias' sign
    (the wall holds a load the model knows); below it, the bias widens the bound where it asks
    for more (a load to hold) and never narrows it (at rest: the whole effort)."""
    limits = JointLimits(**HARD, k_velocity=300.0, k_position=1.0, soft_lower=-4.0,
                         soft_upper=4.0)
    limiter = JointLimiter.of([limits])
    q, v_max = np.array([3.5]), 1.0 * 0.5          # k_position (soft_upper - q)
    for bias in (-40.0, 0.0, 40.0):
        braking = limiter.bounds(q, np.array([0.8]), bias=np.array([bias]))[1][0]
        assert braking == pytest.approx(bias + 300.0 * (v_max - 0.8))
        at_rest = limiter.bounds(np.array([0.0]), np.array([0.0]), bias=np.array([bias]))
        assert at_rest[1][0] == pytest.approx(200.0) and at_rest[0][0] == pytest.approx(-200.0)
        # 0.1 below the velocity limit (1.0, HARD), inside the soft limits
        near = limiter.bounds(np.array([0.0]), np.array([0.9]), bias=np.array([bias]))[1][0]
        assert near == pytest.approx(300.0 * 0.1 + max(bias, 0.0))
