"""The demo's statistics, summary table, verdict and saved recording."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbd_control.control.angles import wrap_to_pi
from rbd_control.demo.record import Series

# The demo's own acceptance, as the README states it (rad).
MAX_GRAVITY_DRIFT = 1e-3
MAX_TRACKING_RMS = 2e-3


@dataclass
class TrackingStats:
    rms: np.ndarray  # per joint, rad
    max: np.ndarray
    peak_effort: np.ndarray
    samples: int


def tracking_stats(series: Series) -> TrackingStats:
    _, desired, actual, effort = series.arrays()
    error = wrap_to_pi(desired - actual)
    return TrackingStats(
        rms=np.sqrt(np.mean(error**2, axis=0)),
        max=np.max(np.abs(error), axis=0),
        peak_effort=np.max(np.abs(effort), axis=0),
        samples=len(series.time),
    )


def drift(series: Series) -> np.ndarray:
    """Largest |q(t) − q(0)| per joint over the hold."""
    _, _, actual, _ = series.arrays()
    return np.max(np.abs(actual - actual[0]), axis=0)


def summary_table(joints, gravity: Series, tracking: dict[str, Series],
                  latency: np.ndarray) -> str:
    mrad = 1e3
    lines = []
    g_drift = drift(gravity)
    g_effort = np.max(np.abs(gravity.arrays()[3]), axis=0)
    span = gravity.time[-1] - gravity.time[0]
    stats = {mode: tracking_stats(series) for mode, series in tracking.items()}
    modes = list(stats)
    lines.append(f"gravity_compensation: released at rest, held {span:.1f} s of sim time")
    lines.append(f"  {'joint':<15}{'max drift [rad]':>16}{'peak effort [N m]':>20}")
    for j, name in enumerate(joints):
        lines.append(f"  {name:<15}{g_drift[j]:>16.2e}{g_effort[j]:>20.2f}")
    lines.append("")
    lines.append("the same trajectory in each mode: tracking error = desired − actual")
    header = f"  {'joint':<15}"
    for mode in modes:
        header += f"| {mode:<37}"
    lines.append(header)
    sub = f"  {'':<15}"
    for _ in modes:
        sub += f"| {'rms [mrad]':>11}{'max [mrad]':>12}{'peak [N m]':>12}  "
    lines.append(sub)
    for j, name in enumerate(joints):
        row = f"  {name:<15}"
        for mode in modes:
            s = stats[mode]
            row += f"| {s.rms[j] * mrad:>11.4f}{s.max[j] * mrad:>12.4f}{s.peak_effort[j]:>12.2f}  "
        lines.append(row)
    row = f"  {'all joints':<15}"
    for mode in modes:
        s = stats[mode]
        overall_rms = math.sqrt(float(np.mean(s.rms**2)))
        row += f"| {overall_rms * mrad:>11.4f}{s.max.max() * mrad:>12.4f}{'':>12}  "
    lines.append(row)
    lines.append(
        "  samples: " + ", ".join(f"{mode} {stats[mode].samples}" for mode in modes)
    )
    lines.append("")
    if latency.size:
        us = latency * 1e6
        lines.append(
            "state→command latency (simulator publishes a joint state → receives the effort it "
            "caused, wall clock):"
        )
        lines.append(
            f"  p50 {np.percentile(us, 50):.0f} µs   p99 {np.percentile(us, 99):.0f} µs   "
            f"max {us.max():.0f} µs   over {us.size} round trips"
        )
    else:
        lines.append("state→command latency: not measured (real-time mode)")
    return "\n".join(lines)


def save_recording(path: Path, joints, gravity: Series, tracking: dict[str, Series],
                   latency) -> Path:
    """The raw samples behind the table and plots, for a user's own analysis (numpy .npz)."""
    arrays = {"joints": np.array(joints), "latency_s": np.asarray(latency)}
    for name, series in {"gravity_compensation": gravity, **tracking}.items():
        t, desired, actual, effort = series.arrays()
        arrays.update({f"{name}_t": t, f"{name}_desired": desired, f"{name}_actual": actual,
                       f"{name}_effort": effort})
    np.savez_compressed(path, **arrays)
    return path


def verdict(gravity: Series, tracking: dict[str, Series]) -> list[str]:
    """What falls short of the demo's promises, in words; empty when all is well."""
    problems = []
    worst_drift = float(drift(gravity).max())
    if not worst_drift < MAX_GRAVITY_DRIFT:
        problems.append(f"gravity_compensation drifted {worst_drift:.3g} rad "
                        f"(limit {MAX_GRAVITY_DRIFT:g})")
    for mode, series in tracking.items():
        rms = float(np.sqrt(np.mean(tracking_stats(series).rms ** 2)))
        if not rms < MAX_TRACKING_RMS:
            problems.append(f"{mode} RMS tracking error {rms:.3g} rad "
                            f"(limit {MAX_TRACKING_RMS:g})")
    return problems
