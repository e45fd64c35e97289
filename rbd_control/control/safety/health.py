"""Loop health: what a user needs to judge the control loop at a glance, without ROS.

    health = LoopHealth(HealthThresholds(...))
    health.record(now, age, compute)        # every answered state (seconds)
    health.coalesced(n); health.watchdog_tripped(); health.clamped(saturated, names)
    report = health.report(now, model_warnings, guard)   # once a second or so

The report has the state age and compute time p50/p99 over the last `window` seconds (a
preallocated ring of samples: nothing is allocated per state), counters since start
(states answered, coalesced, rejected; watchdog trips; age-guard events; clamped commands),
the joints clamped within the window, the model's load warnings, and one level:

  ERROR  states stopped (watchdog tripped), or p99 age / p99 compute above its error threshold
  ERROR  also: an oscillation made the controller abort its trajectory and hold (until the gains
         or the model change)
  WARN   the age guard or an oscillation softens the gains, p99 age / p99 compute above its
         warn threshold,
         states were coalesced or efforts clamped within the window, or the model has warnings
  OK     otherwise

The ROS adapter (rbd_control.ros.controller.diagnostics) turns a report into diagnostic_msgs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rbd_control.control.flags import any_set
from rbd_control.control.errors import ConfigError
from rbd_control.params.controller import CONTROLLER_PARAMETERS

__all__ = ["OK", "WARN", "ERROR", "LEVEL_NAMES", "HealthThresholds", "HealthReport", "LoopHealth"]

OK, WARN, ERROR = 0, 1, 2          # the values of diagnostic_msgs/DiagnosticStatus
LEVEL_NAMES = {OK: "OK", WARN: "WARN", ERROR: "ERROR"}
_DEFAULT = CONTROLLER_PARAMETERS.default
# Samples kept: a second at up to 4 kHz. At higher rates the window shrinks to this many.
RING_SIZE = 4096


@dataclass
class HealthThresholds:
    """p99 levels in seconds beyond which the loop is reported WARN / ERROR: the
    diagnostics.<field> parameters (params/controller.py), their defaults and checks."""

    state_age_warn: float = _DEFAULT("diagnostics.state_age_warn")
    state_age_error: float = _DEFAULT("diagnostics.state_age_error")
    compute_warn: float = _DEFAULT("diagnostics.compute_warn")     # 1 kHz needs < 1 ms a state
    compute_error: float = _DEFAULT("diagnostics.compute_error")
    window: float = 1.0

    def check(self):
        reason = CONTROLLER_PARAMETERS.refusal(self, "diagnostics")
        if reason:
            raise ConfigError(reason)
        if not (isinstance(self.window, (int, float)) and math.isfinite(self.window)
                and self.window > 0):
            raise ConfigError(f"window must be a positive number of seconds, got {self.window!r}")
        for warn, error in (("state_age_warn", "state_age_error"),
                            ("compute_warn", "compute_error")):
            if getattr(self, warn) > getattr(self, error):
                raise ConfigError(f"{warn} ({getattr(self, warn)}) exceeds {error} "
                                  f"({getattr(self, error)})")


@dataclass
class HealthReport:
    level: int
    message: str
    values: list = field(default_factory=list)     # [(key, text)], in display order

    def value(self, key: str) -> str:
        return dict(self.values)[key]


class LoopHealth:
    """Statistics of one control loop; all times in seconds on the caller's clock."""

    def __init__(self, thresholds: HealthThresholds | None = None):
        self.thresholds = thresholds if thresholds is not None else HealthThresholds()
        self.thresholds.check()
        self._time = np.full(RING_SIZE, -np.inf)
        self._age = np.zeros(RING_SIZE)
        self._compute = np.zeros(RING_SIZE)
        self._next = 0
        self.answered = 0
        self.coalesced_total = 0
        self.rejected = 0
        self.watchdog_trips = 0
        self.clamped_commands = 0
        self._last_coalesced = -np.inf
        self._clamped_at: dict[str, float] = {}     # joint -> last time its effort was clamped
        self._stale = False
        self._state_without_model = -np.inf   # last time a state came while no model was in use
        self.model_refusal = ""               # why the last description was refused

    # --- recording (per state; cheap) ----------------------------------------------------

    def record(self, now: float, age: float, compute: float):
        """One answered state: its age when answered (nan if unknown) and the time it took."""
        i = self._next
        self._time[i], self._age[i], self._compute[i] = now, age, compute
        self._next = (i + 1) % RING_SIZE
        self.answered += 1
        self._stale = False
        self._state_without_model = -np.inf

    def coalesced(self, count: int, now: float):
        """`count` queued states were skipped for a newer one."""
        if count > 0:
            self.coalesced_total += count
            self._last_coalesced = now

    def state_without_model(self, now: float):
        """A state arrived while the node holds no model: nothing is commanded."""
        self._state_without_model = now

    def model_refused(self, reason: str):
        """Why the node holds no model (a refused description); '' once one is in use."""
        self.model_refusal = reason

    def rejected_state(self):
        self.rejected += 1

    def watchdog_tripped(self):
        """States stopped; counted once per outage (the next record ends it)."""
        if not self._stale:
            self.watchdog_trips += 1
            self._stale = True

    def clamped(self, saturated, joint_names, now: float):
        """The command of this state had these joints at their effort limit."""
        saturated = np.asarray(saturated, bool)
        if any_set(saturated):
            self.clamped_commands += 1
            for name in np.asarray(joint_names)[saturated]:
                self._clamped_at[str(name)] = now

    # --- reporting (about once a second) ------------------------------------------------

    def report(self, now: float, model_warnings=(), guard=None, oscillation=None) -> HealthReport:
        """guard: the controller's AgeGuard; oscillation: its OscillationDetector."""
        t = self.thresholds
        recent = self._time > now - t.window
        ages = self._age[recent]
        ages = ages[np.isfinite(ages)]
        compute = self._compute[recent]
        age_p50, age_p99 = _percentiles(ages)
        compute_p50, compute_p99 = _percentiles(compute)
        clamped = sorted(j for j, at in self._clamped_at.items() if at > now - t.window)
        coalescing = self._last_coalesced > now - t.window

        errors, warnings = [], []
        if self._stale:
            errors.append("no joint states (watchdog tripped)")
        if self._state_without_model > now - t.window:
            errors.append("joint states arrive but no model is in use, nothing is commanded: "
                          + (self.model_refusal or "no robot description yet"))
        _grade(age_p99, t.state_age_warn, t.state_age_error, "state age p99", warnings, errors)
        _grade(compute_p99, t.compute_warn, t.compute_error, "compute p99", warnings, errors)
        if guard is not None and guard.engaged:
            warnings.append(f"states late: gains softened to {guard.scale:.2f} of bandwidth"
                            + ("; overload, trajectory aborted" if guard.overloaded else ""))
        if oscillation is not None and oscillation.scale < 1.0:
            (errors if oscillation.held else warnings).append(f"oscillation: {oscillation.reason}")
        if coalescing:
            warnings.append("states coalesced (controller behind)")
        if clamped:
            warnings.append(f"effort clamped: {', '.join(clamped)}")
        if model_warnings:
            warnings.append(f"{len(model_warnings)} model warning(s)")
        level = ERROR if errors else WARN if warnings else OK
        message = "; ".join(errors + warnings) or "control loop healthy"

        values = [
            ("state age p50 [ms]", _ms(age_p50)), ("state age p99 [ms]", _ms(age_p99)),
            ("compute p50 [ms]", _ms(compute_p50)), ("compute p99 [ms]", _ms(compute_p99)),
            ("states in window", str(int(np.count_nonzero(recent)))),
            ("states answered", str(self.answered)),
            ("states coalesced", str(self.coalesced_total)),
            ("states rejected", str(self.rejected)),
            ("watchdog trips", str(self.watchdog_trips)),
            ("clamped commands", str(self.clamped_commands)),
            ("clamped joints", ", ".join(clamped) or "none"),
        ]
        if guard is not None:
            values += [
                ("age guard", "engaged" if guard.engaged
                 else ("off" if not guard.enabled else "idle")),
                ("age guard events", str(guard.events)),
                ("age guard overloads", str(guard.overloads)),
                ("gain scale", f"{guard.scale:.3f}"),
            ]
        if oscillation is not None:
            values += [
                ("oscillations", str(oscillation.detections)),
                ("oscillation holds", str(oscillation.holds)),
                ("oscillation gain scale", f"{oscillation.scale:.3f}"),
            ]
        values.append(("model warnings", str(len(model_warnings))))
        values += [(f"model warning {i + 1}", str(w)) for i, w in enumerate(model_warnings)]
        return HealthReport(level, message, values)


def _percentiles(samples):
    if samples.size == 0:
        return math.nan, math.nan
    p50, p99 = np.percentile(samples, (50, 99))
    return float(p50), float(p99)


def _grade(value, warn, error, what, warnings, errors):
    if value > error:
        errors.append(f"{what} {value * 1e3:.2f} ms > {error * 1e3:g} ms")
    elif value > warn:
        warnings.append(f"{what} {value * 1e3:.2f} ms > {warn * 1e3:g} ms")


def _ms(seconds):
    return "n/a" if not math.isfinite(seconds) else f"{seconds * 1e3:.3f}"
