"""Loop health statistics and levels (no ROS)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_control.control import ConfigError
from rbd_control.control.safety.age_guard import AgeGuard
from rbd_control.control.safety.health import (ERROR, OK, RING_SIZE, WARN, HealthThresholds,
                                               LoopHealth)

NAMES = ("a", "b", "c")


def steady(health, start=0.0, seconds=1.0, rate=1000, age=0.001, compute=0.0002):
    for k in range(int(seconds * rate)):
        health.record(start + k / rate, age, compute)
    return start + seconds


def test_percentiles_over_the_last_window_only():
    health = LoopHealth(HealthThresholds(window=1.0))
    now = steady(health, 0.0, 1.0, age=0.010)            # an old, slow second ...
    now = steady(health, now, 1.0, age=0.001)            # ... then a good one
    report = health.report(now)
    assert report.value("state age p50 [ms]") == "1.000"
    assert report.value("state age p99 [ms]") == "1.000"
    assert report.value("compute p99 [ms]") == "0.200"
    assert report.value("states answered") == "2000"
    assert report.level == OK, report.message


def test_ring_buffer_bounds_the_window_at_high_rates():
    health = LoopHealth()
    steady(health, 0.0, 1.0, rate=2 * RING_SIZE)
    assert health.report(1.0).value("states in window") == str(RING_SIZE)


@pytest.mark.parametrize("age, compute, level, text", [
    (0.003, 0.0002, OK, "healthy"),
    (0.008, 0.0002, WARN, "state age p99"),
    (0.030, 0.0002, ERROR, "state age p99"),
    (0.001, 0.002, WARN, "compute p99"),
    (0.001, 0.010, ERROR, "compute p99"),
])
def test_level_against_the_thresholds(age, compute, level, text):
    health = LoopHealth(HealthThresholds(state_age_warn=0.005, state_age_error=0.02,
                                         compute_warn=0.001, compute_error=0.005))
    report = health.report(steady(health, age=age, compute=compute))
    assert report.level == level and text in report.message


def test_watchdog_trip_is_an_error_counted_once_per_outage():
    health = LoopHealth()
    now = steady(health)
    health.watchdog_tripped()
    health.watchdog_tripped()
    report = health.report(now + 0.5)
    assert report.level == ERROR and "watchdog" in report.message
    assert report.value("watchdog trips") == "1"
    now = steady(health, now + 1.0)                      # states are back
    health.watchdog_tripped()
    assert health.report(now + 0.5).value("watchdog trips") == "2"


def test_coalesced_clamped_and_model_warnings_warn_and_expire():
    health = LoopHealth()
    now = steady(health)
    health.coalesced(3, now)
    health.clamped(np.array([False, True, False]), NAMES, now)
    report = health.report(now, model_warnings=("link x has no <inertial>",))
    assert report.level == WARN
    assert "coalesced" in report.message and "clamped: b" in report.message
    assert report.value("states coalesced") == "3" and report.value("clamped joints") == "b"
    assert report.value("model warning 1") == "link x has no <inertial>"
    later = steady(health, now, 1.5)
    report = health.report(later)
    assert report.level == OK and report.value("clamped commands") == "1"


def test_engaged_age_guard_warns_with_its_scale():
    guard = AgeGuard(max_state_age=0.005)
    guard.observe(0.02, 0.0)
    health = LoopHealth(HealthThresholds(state_age_warn=0.05, state_age_error=0.1))
    report = health.report(steady(health), guard=guard)
    assert report.level == WARN and "softened to 0.25" in report.message
    assert report.value("age guard") == "engaged" and report.value("age guard events") == "1"


def test_unknown_ages_and_no_samples_report_n_a():
    health = LoopHealth()
    health.record(0.0, math.nan, 0.0001)
    report = health.report(0.5)
    assert report.value("state age p99 [ms]") == "n/a" and report.level == OK


@pytest.mark.parametrize("fields, match", [
    (dict(window=0.0), "window"),
    (dict(compute_warn=float("nan")), "compute_warn"),
    (dict(state_age_warn=0.1, state_age_error=0.01), "exceeds"),
])
def test_bad_thresholds_are_rejected(fields, match):
    with pytest.raises(ConfigError, match=match):
        LoopHealth(HealthThresholds(**fields))
