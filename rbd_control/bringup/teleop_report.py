"""What `rbd_bringup --teleop` measured (teleop_link.py's recordings), judged and drawn.

The follower's error of the leader is taken at the same instant: each follower state against
the leader's position interpolated at that state's source time (both simulators publish a
state right after each physics step, and the DDS source timestamp is the publishing
process's wall clock, one clock for both; the header stamps are two simulators' own sim
times, which start apart). Comparing the two arms' newest states at the link's own 50 Hz
tick instead counts the leader's state transport and this process's drain lag as error
(`at_ticks`, printed beside it for comparison). No rclpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbd_control.control.angles import wrap_to_pi

MAX_RMS = 0.02          # rad: the follower's RMS error of the leader over the run
MIN_MOVE = 0.2          # rad: the hand must move some leader joint at least this far
TOUCH = 1.0             # N m: a true contact torque above this is the box touched


@dataclass
class Measured:
    time: np.ndarray        # s since the motion began (follower states, source time)
    leader: np.ndarray      # (samples, joints) the leader at those instants, rad
    follower: np.ndarray    # (samples, joints) rad
    at_ticks_rms: float     # rad, the newest pair at each link tick

    @property
    def error(self) -> np.ndarray:
        return wrap_to_pi(self.leader - self.follower)

    def rms(self) -> float:
        return float(np.sqrt(np.mean(np.square(self.error)))) if len(self.time) else np.nan


def measure(link, began: float, ended: float) -> Measured:
    """The follower's error of the leader between the wall times `began` and `ended` (the
    motion begins once both arms' states are in: neither recording is empty)."""
    lt, lq = link.states["leader"].arrays()
    ft, fq = link.states["follower"].arrays()
    keep = (ft >= max(began, lt[0])) & (ft <= min(ended, lt[-1]))
    leader = np.column_stack([np.interp(ft[keep], lt, lq[:, j]) for j in range(lq.shape[1])])
    ticks = [(leader_q, follower_q) for t, leader_q, follower_q in link.ticks
             if began <= t <= ended]
    at_ticks = (float(np.sqrt(np.mean(np.square(wrap_to_pi(np.subtract(*zip(*ticks)))))))
                if ticks else np.nan)
    return Measured(ft[keep] - began, leader, fq[keep], at_ticks)


def peak(series, began: float, ended: float) -> float:
    t, values = series.arrays()
    inside = values[(t >= began) & (t <= ended)]
    return float(np.abs(inside).max()) if inside.size else 0.0


def summary(measured: Measured, link, began: float, ended: float) -> dict:
    """The figures of the run's last line (rad, N m); `fed` counts only what was sent to a
    leader's simulator that subscribes."""
    return dict(moved=np.ptp(measured.leader, axis=0) if len(measured.time) else np.zeros(1),
                rms=measured.rms(), largest=float(np.abs(measured.error).max(initial=0.0)),
                at_ticks=measured.at_ticks_rms, touch=peak(link.truth, began, ended),
                estimated=peak(link.tau_ext, began, ended),
                fed=peak(link.fed, began, ended) if link.feedback_reached else 0.0,
                flagged=any(flag for t, flag in link.flags if began <= t <= ended))


def summary_line(figures: dict) -> str:
    return (f"leader moved up to {figures['moved'].max():.3f} rad; follower RMS error "
            f"{figures['rms'] * 1e3:.1f} mrad (largest {figures['largest'] * 1e3:.1f}; "
            f"{figures['at_ticks'] * 1e3:.1f} between the newest states at the link's ticks); "
            f"contact torque peak {figures['touch']:.2f} N m, estimated "
            f"{figures['estimated']:.2f}, contact flagged: {'yes' if figures['flagged'] else 'no'}"
            f"; feedback peak on the leader {figures['fed']:.2f} N m")


def judged(figures: dict, feedback: str, lap_done: bool) -> tuple[list[str], list[str]]:
    """(failures, unfinished): what a run that covered the lap must show, and what it did not
    get to (a run stopped before the box, by a signal or --duration)."""
    failures, unfinished = [], []
    if not figures["rms"] < MAX_RMS:
        failures.append(f"the follower's RMS error {figures['rms'] * 1e3:.1f} mrad is not "
                        f"below {MAX_RMS * 1e3:.0f}")
    wanted = [(figures["moved"].max() > MIN_MOVE, "the hand did not move the leader "
               f"{MIN_MOVE} rad"),
              (figures["touch"] > TOUCH and figures["flagged"],
               "the follower's box was not touched and flagged"),
              (feedback == "off" or figures["fed"] > TOUCH,
               f"no feedback over {TOUCH} N m reached the leader")]
    for held, reason in wanted:
        if not held:
            (failures if lap_done else unfinished).append(reason)
    return failures, unfinished


def save_recording(path: Path, link, began: float) -> Path:
    """Every series the link recorded (times: wall s since the motion began, `began` its
    wall time: the nodes' log lines are stamped on that clock), for a look of one's own:
    numpy.load(path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for name, series in (("leader", link.states["leader"]), ("follower", link.states["follower"]),
                         ("tau_ext", link.tau_ext), ("contact_torque", link.truth),
                         ("feedback", link.fed)):
        t, values = series.arrays()
        arrays[f"{name}_time"], arrays[name] = t - began, values
    arrays["flag_time"] = np.array([t for t, _ in link.flags]) - began
    arrays["flag"] = np.array([flag for _, flag in link.flags], dtype=bool)
    arrays["tick_time"] = np.array([t for t, _, _ in link.ticks]) - began
    np.savez_compressed(path, joints=np.array(link.joints), began=began, **arrays)
    return path


def write_plots(output: Path, joints, measured: Measured, link, began: float) -> list[Path]:
    """teleop_positions.png, teleop_error.png, teleop_contact.png in `output`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    output.mkdir(parents=True, exist_ok=True)
    n, t = len(joints), measured.time
    figures = []
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
    for j in range(n):
        axes[j, 0].plot(t, measured.leader[:, j], "k--", lw=1.2, label="leader")
        axes[j, 0].plot(t, measured.follower[:, j], "C0", lw=1.0, label="follower")
        axes[j, 0].set_ylabel(f"{joints[j]}\n[rad]", fontsize=8)
    axes[0, 0].set_title("leader and follower, at the same instants")
    figures.append((fig, axes, "teleop_positions.png"))

    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
    for j in range(n):
        axes[j, 0].plot(t, measured.error[:, j] * 1e3, "C3", lw=1.0, label="leader - follower")
        axes[j, 0].set_ylabel(f"{joints[j]}\n[mrad]", fontsize=8)
    axes[0, 0].set_title(f"the follower's error of the leader: RMS {measured.rms() * 1e3:.1f} "
                         "mrad")
    figures.append((fig, axes, "teleop_error.png"))

    fig, axes = plt.subplots(n + 1, 1, figsize=(10, 1.8 * (n + 1)), sharex=True, squeeze=False)
    for series, style, label in ((link.truth, "k-", "true contact torque"),
                                 (link.tau_ext, "C1-", "estimated tau_ext"),
                                 (link.fed, "C2:", "fed back to the leader")):
        st, values = series.arrays()
        for j in range(n):
            axes[j, 0].plot(st - began, values[:, j], style, lw=1.0, label=label)
    for j in range(n):
        axes[j, 0].set_ylabel(f"{joints[j]}\n[N m]", fontsize=8)
    flag_t = [began, *(ft for ft, _ in link.flags), began + t[-1]]
    flag_v = [0.0, *(float(flag) for _, flag in link.flags)]
    flag_v.append(flag_v[-1])
    axes[n, 0].step(np.array(flag_t) - began, flag_v, "C3", where="post")
    axes[n, 0].set_ylabel("contact\nflag", fontsize=8)
    axes[0, 0].set_title("the follower's contact with the box")
    figures.append((fig, axes, "teleop_contact.png"))

    written = []
    for fig, axes, name in figures:
        for ax in axes[:, 0]:
            ax.grid(alpha=0.3)
        axes[0, 0].legend(loc="upper right", fontsize=8)
        axes[-1, 0].set_xlabel("time since the hand began to move [s]")
        axes[-1, 0].set_xlim(left=0.0)
        fig.tight_layout()
        fig.savefig(output / name, dpi=110)
        plt.close(fig)
        written.append(output / name)
    return written
