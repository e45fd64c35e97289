"""The rbd_control demo: the default arm in MuJoCo under the real ROS 2 nodes.

    python -m rbd_control.demo [--output demo_output] [--real-time]

What it shows, with rbd_mujoco_sim and rbd_controller in their own processes (the
rbd_bringup layout) and this process recording the controller's tuning topics:

  1. gravity_compensation: the arm is released at a pose and must stay there;
  2. the same ~8 s trajectory through the workspace, in computed_torque,
  3. and again in feedforward_pd (switched at runtime through the `mode` parameter).

It prints a summary table (RMS and max tracking error per joint, drift, peak effort,
state→command latency) and writes PNG plots to the output directory.

By default the simulator runs in lockstep: one 1 ms physics step per effort command,
so the result does not depend on how busy the machine is, and the state→command
latency it measures is the true round trip (simulator → controller → simulator).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from rbd_control.bringup import (
    CONTROLLER_NODE,
    DEFAULT_ARM_HOME,
    SIMULATOR_NODE,
    Bringup,
    BringupConfig,
    demo_waypoints,
    find_config_file,
    joint_trajectory_msg,
    make_description_publisher,
)

GRAVITY_HOLD_S = 5.0
# The demo's own acceptance: what the issue promises a user (rad).
MAX_GRAVITY_DRIFT = 1e-3
MAX_TRACKING_RMS = 2e-3
SETTLE_AFTER_TRAJECTORY_S = 1.0
TRACKING_MODES = ("computed_torque", "feedforward_pd")
STARTUP_TIMEOUT_S = 60.0  # wall: numba compiles the dynamics on a cold first start
# Stall detection: sim time must advance at least this much per this many wall seconds.
STALL_WALL_S = 20.0


# --- recording ----------------------------------------------------------------------


@dataclass
class Series:
    """Samples of one run, in time order; arrays are (samples, joints)."""

    time: list = field(default_factory=list)
    desired: list = field(default_factory=list)
    actual: list = field(default_factory=list)
    effort: list = field(default_factory=list)

    def arrays(self):
        order = np.argsort(self.time)
        return (
            np.asarray(self.time)[order],
            np.asarray(self.desired)[order],
            np.asarray(self.actual)[order],
            np.asarray(self.effort)[order],
        )


class Recorder:
    """Joins the controller's ~/desired and ~/actual topics by stamp (sim time)."""

    def __init__(self, node, joints: Sequence[str]) -> None:
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64

        self.joints = list(joints)
        self._desired: dict[int, np.ndarray] = {}
        self._actual: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.latencies: list[tuple[float, float]] = []  # (sim time of last state, seconds)
        self.sim_time = -1.0
        depth = 5000  # ride out a slow moment of this process without losing samples
        node.create_subscription(JointState, f"/{CONTROLLER_NODE}/desired", self._on_desired, depth)
        node.create_subscription(JointState, f"/{CONTROLLER_NODE}/actual", self._on_actual, depth)
        node.create_subscription(
            Float64, f"/{SIMULATOR_NODE}/command_latency", self._on_latency, depth
        )

    @staticmethod
    def _key(msg) -> int:
        return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec

    def _on_desired(self, msg) -> None:
        self._desired[self._key(msg)] = np.array(msg.position)

    def _on_actual(self, msg) -> None:
        key = self._key(msg)
        self._actual[key] = (np.array(msg.position), np.array(msg.effort))
        self.sim_time = max(self.sim_time, key * 1e-9)

    def _on_latency(self, msg) -> None:
        self.latencies.append((self.sim_time, msg.data))

    def series(self, start: float, end: float) -> Series:
        out = Series()
        for key in sorted(self._actual):
            t = key * 1e-9
            if start <= t <= end and key in self._desired:
                q, tau = self._actual[key]
                out.time.append(t)
                out.desired.append(self._desired[key])
                out.actual.append(q)
                out.effort.append(tau)
        return out

    def latency_between(self, start: float, end: float) -> np.ndarray:
        return np.array([dt for t, dt in self.latencies if start <= t <= end])


# --- the run ---------------------------------------------------------------------


class Progress:
    """One status line, rewritten in place on a terminal, every few seconds otherwise."""

    def __init__(self) -> None:
        self._tty = sys.stderr.isatty()
        self._last = 0.0
        self._started = time.monotonic()

    def show(self, phase: str, sim_now: float, sim_end: float, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self._tty else 3.0):
            return
        self._last = now
        line = (
            f"[demo] {phase:<22} sim t {max(sim_now, 0.0):6.2f} s / {sim_end:6.2f} s"
            f"   wall {now - self._started:5.1f} s"
        )
        if self._tty:
            sys.stderr.write("\r" + line + "   ")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self._tty:
            sys.stderr.write("\n")


class DemoRun:
    """Drives the running nodes through the three phases and keeps what they did."""

    def __init__(self, node, executor, bringup: Bringup, joints: Sequence[str]) -> None:
        from rcl_interfaces.srv import SetParameters
        from trajectory_msgs.msg import JointTrajectory

        self.node, self.executor, self.bringup = node, executor, bringup
        self.joints = list(joints)
        self.recorder = Recorder(node, joints)
        self.progress = Progress()
        self.windows: dict[str, tuple[float, float]] = {}
        self._set_parameters = node.create_client(
            SetParameters, f"/{CONTROLLER_NODE}/set_parameters"
        )
        self._trajectory_pub = node.create_publisher(
            JointTrajectory, f"/{CONTROLLER_NODE}/joint_trajectory", 10
        )

    def spin_until(self, condition, timeout: float, what: str, phase: str, sim_end: float) -> None:
        """Spin until condition(); fail with the nodes' logs on timeout or a crashed node."""
        deadline = time.monotonic() + timeout
        while not condition():
            self.executor.spin_once(timeout_sec=0.02)
            self.bringup.check_alive()
            self.progress.show(phase, self.recorder.sim_time, sim_end)
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")

    def wait_for_sim_time(self, target: float, phase: str) -> None:
        # The wall time needed depends on the machine; fail only if sim time stalls.
        while self.recorder.sim_time < target:
            before = self.recorder.sim_time
            self.spin_until(
                lambda: self.recorder.sim_time >= min(target, before + 0.05),
                STALL_WALL_S,
                f"sim time to advance past {before:.2f} s",
                phase,
                target,
            )
        self.progress.show(phase, self.recorder.sim_time, target, force=True)

    def set_mode(self, mode: str) -> None:
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters

        request = SetParameters.Request()
        request.parameters = [
            Parameter(
                name="mode",
                value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=mode),
            )
        ]
        self.spin_until(
            lambda: self._set_parameters.service_is_ready(), 10.0, "the parameter service", mode, 0
        )
        future = self._set_parameters.call_async(request)
        self.spin_until(future.done, 10.0, f"mode := {mode}", mode, 0)
        result = future.result().results[0]
        if not result.successful:
            raise RuntimeError(f"controller refused mode {mode}: {result.reason}")

    def gravity_compensation(self) -> None:
        # The controller starts in gravity_compensation and the lockstep simulator only
        # steps when commanded, so the arm is "released" at t = 0 with the controller on.
        phase = "gravity_compensation"
        self.spin_until(
            lambda: self.recorder.sim_time >= 0.0, STARTUP_TIMEOUT_S, "the first command", phase, GRAVITY_HOLD_S
        )
        start = self.recorder.sim_time
        self.wait_for_sim_time(start + GRAVITY_HOLD_S, phase)
        self.windows[phase] = (start, start + GRAVITY_HOLD_S)

    def track(self, mode: str, home: dict[str, float]) -> None:
        self.set_mode(mode)
        waypoints = demo_waypoints(home, self.joints)
        duration = waypoints[-1][0] + SETTLE_AFTER_TRAJECTORY_S
        start = self.recorder.sim_time
        self._trajectory_pub.publish(joint_trajectory_msg(self.joints, waypoints))
        self.wait_for_sim_time(start + duration, mode)
        self.windows[mode] = (start, start + duration)


# --- analysis -----------------------------------------------------------------------


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


def summary_table(joints, gravity: Series, tracking: dict[str, Series], latency: np.ndarray) -> str:
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


# --- plots ------------------------------------------------------------------------


def write_plots(output: Path, joints, gravity: Series, tracking: dict[str, Series], limits) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    output.mkdir(parents=True, exist_ok=True)
    written = []
    n = len(joints)
    modes = list(tracking)

    # desired vs actual, one column per mode
    fig, axes = plt.subplots(n, len(modes), figsize=(6 * len(modes), 1.9 * n), sharex="col", squeeze=False)
    for c, mode in enumerate(modes):
        t, desired, actual, _ = tracking[mode].arrays()
        t = t - t[0]
        for j in range(n):
            ax = axes[j, c]
            ax.plot(t, desired[:, j], "k--", lw=1.2, label="desired")
            ax.plot(t, actual[:, j], color="C0" if c == 0 else "C1", lw=1.0, label="actual")
            ax.set_ylabel(f"{joints[j]}\n[rad]", fontsize=8)
            ax.grid(alpha=0.3)
        axes[0, c].set_title(f"{mode}: desired vs actual position")
        axes[0, c].legend(loc="upper right", fontsize=8)
        axes[-1, c].set_xlabel("time since trajectory sent [s]")
    written.append(_save(fig, output / "tracking_positions.png"))

    # tracking error, both modes overlaid (desired and actual differ too little to see above)
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
    for c, mode in enumerate(modes):
        t, desired, actual, _ = tracking[mode].arrays()
        t = t - t[0]
        error = wrap_to_pi(desired - actual) * 1e3
        for j in range(n):
            axes[j, 0].plot(t, error[:, j], color=f"C{c}", lw=1.0, label=mode)
    for j in range(n):
        axes[j, 0].set_ylabel(f"{joints[j]}\n[mrad]", fontsize=8)
        axes[j, 0].grid(alpha=0.3)
    axes[0, 0].set_title("tracking error (desired − actual), same trajectory")
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time since trajectory sent [s]")
    written.append(_save(fig, output / "tracking_error.png"))

    # effort, both modes, with the URDF limits
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
    for c, mode in enumerate(modes):
        t, _, _, effort = tracking[mode].arrays()
        for j in range(n):
            axes[j, 0].plot(t - t[0], effort[:, j], color=f"C{c}", lw=1.0, label=mode)
    for j in range(n):
        ax = axes[j, 0]
        # Scale to the data: the limits are often 10x the effort a gentle motion needs, and
        # drawing them would flatten every curve. They are drawn only when nearly reached.
        low, high = ax.get_ylim()
        if np.isfinite(limits[j]) and max(abs(low), abs(high)) > 0.5 * limits[j]:
            for sign in (-1, 1):
                ax.axhline(sign * limits[j], color="r", lw=0.8, ls=":")
        limit = f"limit {limits[j]:g}" if np.isfinite(limits[j]) else "no limit"
        ax.set_ylabel(f"{joints[j]}\n[N m]\n({limit})", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].set_title("commanded effort (URDF <limit effort> in each label; red dotted when approached)")
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time since trajectory sent [s]")
    written.append(_save(fig, output / "effort.png"))

    # gravity compensation: drift from the release pose
    t, _, actual, effort = gravity.arrays()
    fig, (ax_q, ax_tau) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for j in range(n):
        ax_q.plot(t - t[0], (actual[:, j] - actual[0, j]) * 1e3, lw=1.0, label=joints[j])
        ax_tau.plot(t - t[0], effort[:, j], lw=1.0, label=joints[j])
    ax_q.set_ylabel("q − q(0) [mrad]")
    ax_q.set_title("gravity_compensation: arm released at rest")
    ax_q.legend(loc="upper right", fontsize=8, ncol=3)
    ax_q.grid(alpha=0.3)
    ax_tau.set_ylabel("effort [N m]")
    ax_tau.set_xlabel("time since release [s]")
    ax_tau.grid(alpha=0.3)
    written.append(_save(fig, output / "gravity_compensation.png"))
    return written


def save_recording(path: Path, joints, gravity: Series, tracking: dict[str, Series], latency) -> Path:
    """The raw samples behind the table and plots, for a user's own analysis (numpy .npz)."""
    arrays = {"joints": np.array(joints), "latency_s": np.asarray(latency)}
    for name, series in {"gravity_compensation": gravity, **tracking}.items():
        t, desired, actual, effort = series.arrays()
        arrays.update({f"{name}_t": t, f"{name}_desired": desired, f"{name}_actual": actual, f"{name}_effort": effort})
    np.savez_compressed(path, **arrays)
    return path


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


# --- main ---------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rbd_demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=Path("demo_output"), help="plots go here")
    parser.add_argument(
        "--real-time",
        action="store_true",
        help="simulator paced by the wall clock, not lockstep (needs a core free for each node; "
        "on a busy machine the controller falls behind and the loop degrades)",
    )
    parser.add_argument(
        "--config", type=Path, help="controller YAML (default: config/arm_controller.yaml)"
    )
    return parser.parse_args(argv)


def _import_rclpy():
    try:
        import rclpy  # noqa: F401
    except ImportError as error:
        raise SystemExit(
            f"rbd_demo needs rclpy ({error}). Install the ROS 2 wheels "
            "(pip install -r requirements/ros.txt) and `source scripts/ros_env.sh`, or source a ROS 2 Jazzy install."
        )


def run(args: argparse.Namespace) -> int:
    _import_rclpy()
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import load_urdf

    urdf = default_arm_urdf()
    config = BringupConfig(
        urdf=urdf,
        config_file=args.config or find_config_file(),
        mode="gravity_compensation",
        lockstep=not args.real_time,
        initial_positions=dict(DEFAULT_ARM_HOME),
        log_dir=args.output / "logs",
    )
    joints = config.joints()
    model = load_urdf(urdf)
    limits = np.asarray(model.effort_limit)[[model.joint_names.index(j) for j in joints]]

    rclpy.init()
    node = rclpy.create_node("rbd_demo")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    make_description_publisher(node, urdf)
    pacing = "real time" if args.real_time else "lockstep"
    print(f"rbd_control demo: default arm '{model.name}', MuJoCo 1 kHz {pacing}; logs in {config.log_dir}")
    try:
        with Bringup(config) as bringup:
            demo = DemoRun(node, executor, bringup, joints)
            demo.gravity_compensation()
            for mode in TRACKING_MODES:
                demo.track(mode, DEFAULT_ARM_HOME)
            demo.progress.done()
    except RuntimeError as error:
        print(f"\nrbd_demo failed: {error}\nnode logs: {config.log_dir}", file=sys.stderr)
        return 1
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()

    recorder = demo.recorder
    gravity = recorder.series(*demo.windows["gravity_compensation"])
    tracking = {mode: recorder.series(*demo.windows[mode]) for mode in TRACKING_MODES}
    latency = recorder.latency_between(demo.windows[TRACKING_MODES[0]][0], demo.windows[TRACKING_MODES[-1]][1])
    print()
    print(summary_table(joints, gravity, tracking, latency))
    for path in write_plots(args.output, joints, gravity, tracking, limits):
        print(f"wrote {path}")
    print(f"wrote {save_recording(args.output / 'recording.npz', joints, gravity, tracking, latency)}")
    problems = verdict(gravity, tracking)
    print()
    if problems:
        print("verdict: FAILED\n  " + "\n  ".join(problems))
        print(f"  (gains come from {config.config_file}; node logs in {config.log_dir})")
        return 2
    print(
        f"verdict: OK (drift < {MAX_GRAVITY_DRIFT:g} rad, RMS tracking error < "
        f"{MAX_TRACKING_RMS:g} rad in every mode)"
    )
    return 0


def verdict(gravity: Series, tracking: dict[str, Series]) -> list[str]:
    """What falls short of the demo's promises, in words; empty when all is well."""
    problems = []
    worst_drift = float(drift(gravity).max())
    if not worst_drift < MAX_GRAVITY_DRIFT:
        problems.append(f"gravity_compensation drifted {worst_drift:.3g} rad (limit {MAX_GRAVITY_DRIFT:g})")
    for mode, series in tracking.items():
        rms = float(np.sqrt(np.mean(tracking_stats(series).rms ** 2)))
        if not rms < MAX_TRACKING_RMS:
            problems.append(f"{mode} RMS tracking error {rms:.3g} rad (limit {MAX_TRACKING_RMS:g})")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
