"""The state-age guard: softened feedback while states are old, recovery, and what it buys
in a loop with delay (MuJoCo plant, simulated time only)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from closed_loop_support import make_plant
from rbd_control.control import (ConfigError, Controller, ControllerConfig, JointTrajectory,
                                 TrajectoryPoint)
from rbd_control.control.safety.age_guard import AgeGuard
from rbd_control.control.safety.oscillation import OscillationThresholds
from rbd_control.dynamics import gravity

Q0 = np.array([0.0, -0.8, 1.4, -0.6, 0.5, 0.0])   # the default arm's home pose
ZERO = np.zeros(6)


@pytest.fixture()
def names(arm_model):
    return arm_model.joint_names


# --- AgeGuard alone ----------------------------------------------------------------------

def test_guard_engages_above_max_age_and_scales_by_the_worst_age():
    guard = AgeGuard(max_state_age=0.005, recovery_time=0.5)
    assert not guard.observe(0.004, 0.0) and guard.scale == 1.0
    assert not guard.observe(0.010, 0.001)           # engaged: softened, no overload
    assert guard.engaged and guard.events == 1 and guard.scale == pytest.approx(0.5)
    assert not guard.observe(0.020, 0.002)            # still engaged, not a new event
    assert guard.scale == pytest.approx(0.25)
    assert not guard.observe(0.010, 0.003)            # softer never relaxes within an episode
    assert guard.scale == pytest.approx(0.25) and guard.engaged_states == 3


def test_guard_recovers_after_fresh_states_for_the_recovery_time():
    guard = AgeGuard(max_state_age=0.005, recovery_time=0.5)
    guard.observe(0.1, 0.0)
    guard.observe(0.001, 0.1)
    guard.observe(0.001, 0.5)
    assert guard.engaged                               # fresh for 0.4 s only
    guard.observe(0.1, 0.55)                           # a late one restarts the wait
    guard.observe(0.001, 0.6)
    guard.observe(0.001, 1.05)
    assert guard.engaged
    guard.observe(0.001, 1.1)
    assert not guard.engaged and guard.scale == 1.0 and guard.events == 1
    guard.observe(0.1, 1.2)
    assert guard.events == 2 and guard.scale == pytest.approx(0.05)


def test_late_states_kept_up_for_the_overload_time_are_an_overload():
    guard = AgeGuard(max_state_age=0.005, recovery_time=0.5, overload_time=0.2)
    assert not guard.observe(0.010, 1.0)              # softened only
    assert not guard.observe(0.001, 1.05)             # a fresh state does not end the episode
    assert not guard.observe(0.010, 1.19) and not guard.overloaded
    assert guard.observe(0.010, 1.21)                  # late for 0.2 s: overloaded just now
    assert guard.overloaded and guard.overloads == 1 and guard.events == 1
    assert not guard.observe(0.010, 1.3)              # reported once per episode
    for k in range(6):                                 # fresh for 0.5 s: recovered
        guard.observe(0.001, 1.4 + 0.1 * k)
    assert not guard.engaged and not guard.overloaded
    assert not guard.observe(0.010, 2.0)              # a new episode starts softened again
    assert guard.events == 2 and guard.overloads == 1


def test_a_single_hiccup_never_overloads():
    guard = AgeGuard(max_state_age=0.005, recovery_time=0.5, overload_time=0.2)
    assert not guard.observe(0.050, 0.0)
    for k in range(1, 1000):                           # then fresh states at 1 kHz
        assert not guard.observe(0.001, k * 1e-3)
    assert not guard.engaged and guard.overloads == 0


def test_guard_survives_a_clock_jumping_back():
    guard = AgeGuard(max_state_age=0.005, recovery_time=0.5)
    guard.observe(0.1, 10.0)
    guard.observe(0.001, 10.1)
    guard.observe(0.001, 0.0)                          # a restarted simulator's clock
    guard.observe(0.001, 0.4)
    assert guard.engaged
    guard.observe(0.001, 0.5)
    assert not guard.engaged


def test_guard_off_at_zero_and_ignores_unknown_ages():
    off = AgeGuard(max_state_age=0.0)
    assert not off.observe(10.0, 0.0) and not off.engaged
    on = AgeGuard(max_state_age=0.005)
    assert not on.observe(float("nan"), 0.0) and not on.engaged


@pytest.mark.parametrize("value", [-0.001, float("nan"), float("inf"), "x"])
def test_bad_max_state_age_is_rejected(arm_model, value):
    with pytest.raises(ConfigError, match="max_state_age"):
        Controller(arm_model, ControllerConfig(max_state_age=value))


# --- through the Controller --------------------------------------------------------------

def tracking(arm_model, names):
    """A feedforward_pd controller 0.5 s into a 1 s trajectory from Q0 to Q0 + 0.5."""
    # states far apart (these tests step time by hand): a loop designed for a 1 s state period,
    # so that only the ages count, not the period (age_guard.py); constant gains, so the
    # feedback can be checked against them (no inertia scheduling)
    controller = Controller(arm_model, ControllerConfig(mode="feedforward_pd", max_state_age=0.005,
                                                        state_timeout=10.0,
                                                        expected_state_period=1.0,
                                                        inertia_scheduling=False))
    controller.update(0.0, names, Q0, ZERO, age=0.001)
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint(Q0 + 0.5, time_from_start=1)]), 0.0)
    assert not controller.update(0.5, names, Q0, ZERO, age=0.001).holding
    return controller


def test_a_late_state_softens_the_feedback_and_keeps_the_trajectory(arm_model, names):
    controller = tracking(arm_model, names)
    fresh = controller.update(0.55, names, Q0, ZERO, age=0.001)
    late = controller.update(0.6, names, Q0, ZERO, age=0.020)
    assert not late.holding and late.feedback_scale == pytest.approx(0.25)
    assert controller.trajectory_end_time is not None
    assert np.all(late.desired_q - fresh.desired_q > 0)   # still moving along the trajectory
    g = controller.gains
    error = late.desired_q - Q0
    np.testing.assert_allclose(late.feedback,
                               0.25**2 * g.kp * error - 0.25 * g.kd * (0 - late.desired_qd),
                               atol=1e-9)
    for k in range(1, 7):                              # fresh again for 0.6 s
        recovered = controller.update(0.6 + 0.1 * k, names, Q0, ZERO, age=0.001)
    assert recovered.feedback_scale == 1.0 and controller.age_guard.events == 1


def test_states_late_for_the_overload_time_abort_the_trajectory_and_hold(arm_model, names):
    controller = tracking(arm_model, names)
    q = Q0 + 0.01
    for k in range(20):                                # late states for 0.19 s: softened only
        assert not controller.update(0.6 + 0.01 * k, names, Q0, ZERO, age=0.020).holding
    held = controller.update(0.8, names, q, ZERO, age=0.020)
    assert held.holding and held.feedback_scale == pytest.approx(0.25)
    np.testing.assert_allclose(held.desired_q, q)      # holds the pose measured on overloading
    assert controller.trajectory_end_time is None and controller.age_guard.overloads == 1
    later = controller.update(0.81, names, Q0, ZERO, age=0.020)
    g = controller.gains
    expected = gravity(arm_model, Q0) + 0.25**2 * g.kp * (q - Q0)
    np.testing.assert_allclose(later.feedforward + later.feedback, expected, atol=1e-9)

    for k in range(1, 7):                              # fresh again for 0.6 s
        recovered = controller.update(0.81 + 0.1 * k, names, Q0, ZERO, age=0.001)
    assert recovered.feedback_scale == 1.0 and recovered.holding
    np.testing.assert_allclose(recovered.feedback, g.kp * (q - Q0), atol=1e-9)
    assert controller.age_guard.events == 1


def test_without_an_age_the_guard_never_engages(arm_model, names):
    controller = Controller(arm_model, ControllerConfig(max_state_age=0.005))
    assert controller.update(0.0, names, Q0, ZERO).feedback_scale == 1.0
    assert controller.age_guard.events == 0


# --- a loop with delay -------------------------------------------------------------------

def excursion_with_delay(arm_urdf, arm_model, delay_steps, max_state_age, seconds=2.0,
                         oscillation=0.0):
    """Hold home, knock every joint (+0.2 rad/s) at 0.2 s; every command reaches the plant
    delay_steps (ms) after its state. (largest excursion from home in rad, the controller).
    oscillation: the oscillation detector's frequency (0: off, the guard alone)."""
    plant = make_plant(arm_urdf, arm_model.joint_names)
    plant.reset(Q0)
    controller = Controller(arm_model, ControllerConfig(
        max_state_age=max_state_age, oscillation=OscillationThresholds(frequency=oscillation)))
    in_flight = collections.deque([gravity(arm_model, Q0)] * delay_steps)
    largest = 0.0
    for step in range(int(seconds * 1000)):
        q, qd = plant.state()
        largest = max(largest, np.abs(q - Q0).max())
        if largest > 10.0:
            return np.inf, controller
        tau = controller.update(plant.time, arm_model.joint_names, q, qd,
                                age=delay_steps * 1e-3).tau
        in_flight.append(tau)
        if step == 200:
            plant.data.qvel[:] += 0.2
        plant.step(in_flight.popleft())
    return largest, controller


def test_default_gains_hold_at_twice_their_design_delay_with_and_without_the_guard(arm_urdf,
                                                                                   arm_model):
    # designed for 10 ms at 250 Hz (loop_design.py); at 1 kHz the unit loop's margin ends near
    # 28 ms
    unguarded, _ = excursion_with_delay(arm_urdf, arm_model, 20, max_state_age=0.0)
    guarded, controller = excursion_with_delay(arm_urdf, arm_model, 20, max_state_age=0.010)
    print(f"20 ms delay: excursion {unguarded:.3g} rad without the guard, "
          f"{guarded:.3g} rad with it")
    assert controller.age_guard.engaged and controller.feedback_scale == pytest.approx(0.5)
    assert unguarded < 0.12 and guarded < 0.25


def test_at_40_ms_the_loop_oscillates_and_the_detector_notices(arm_urdf, arm_model):
    """Far beyond the design (4x its delay; at 1 kHz the unit loop's margin ends near 28 ms)
    the default gains lose stability; softening (the guard's or the detector's) does not
    restore it there: the delayed gravity term G(q(t - tau)) - G(q(t)) ~ -dG/dq qd tau then
    outweighs the softened damping."""
    unwatched, _ = excursion_with_delay(arm_urdf, arm_model, 40, 0.0, seconds=3.0)
    watched, controller = excursion_with_delay(arm_urdf, arm_model, 40, 0.0, seconds=3.0,
                                               oscillation=5.0)
    print(f"40 ms delay: excursion {unwatched:.3g} rad unwatched, {watched:.3g} rad watched")
    assert unwatched > 1.0
    assert controller.oscillation.detections >= 1 and controller.feedback_scale < 1.0
    assert "oscillat" in controller.oscillation.reason or "energy" in controller.oscillation.reason


def test_states_slower_than_the_expected_period_count_as_late():
    """At 50 Hz, fresh states leave the 250 Hz design (4 ms) with half of 16 ms of extra
    zero-order-hold lag: like states 8 ms late against a 5 ms max_state_age."""
    guard = AgeGuard(max_state_age=0.005, expected_period=0.004)
    for k in range(5):
        guard.observe(0.0, k * 0.004)            # as designed: never late
    assert not guard.engaged
    guard.observe(0.0, 0.066)                    # one 50 ms gap: a hiccup, not a slow loop
    assert not guard.engaged
    for k in range(1, 200):
        guard.observe(0.0, 0.066 + k * 0.020)    # 50 Hz from now on
    assert guard.engaged and guard.period == pytest.approx(0.020, rel=1e-3)
    assert guard.scale == pytest.approx(0.005 / 0.008, rel=1e-3)
    unjudged = AgeGuard(max_state_age=0.005)     # the default: the period is not judged
    for k in range(4):
        unjudged.observe(0.0, k * 0.020)
    assert not unjudged.engaged
