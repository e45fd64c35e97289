"""The demo's PNG plots."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rbd_control.control.angles import wrap_to_pi
from rbd_control.demo.record import Series


def write_plots(output: Path, joints, gravity: Series, tracking: dict[str, Series],
                limits) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    output.mkdir(parents=True, exist_ok=True)
    written = []
    n = len(joints)
    modes = list(tracking)

    # desired vs actual, one column per mode
    fig, axes = plt.subplots(n, len(modes), figsize=(6 * len(modes), 1.9 * n), sharex="col",
                             squeeze=False)
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
    axes[0, 0].set_title("commanded effort (URDF <limit effort> in each label; "
                         "red dotted when approached)")
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


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
