"""The identification phase's before / after block, its verdict and its plot (identify.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rbd_control.control.angles import wrap_to_pi
from rbd_control.demo.identify import (MAX_IDENTIFIED_DRIFT, MAX_RMS_VS_EXACT,
                                       MIN_NOMINAL_DRIFT, MIN_RMS_GAIN, MODELS, PAYLOAD_EXCITE_S,
                                       IdentificationOutcome)
from rbd_control.demo.plant import TRUE_PAYLOAD


def summary(outcome: IdentificationOutcome) -> str:
    runs = outcome.runs
    lines = [
        "identification: the simulated arm is not its URDF (masses and centres of mass off by up "
        f"to 25 %, joint friction, {TRUE_PAYLOAD.mass:g} kg payload on {TRUE_PAYLOAD.link}); the "
        "controller starts from the nominal URDF",
        f"  excitation {outcome.excite_s:g} s, then {PAYLOAD_EXCITE_S:g} s with the payload, "
        f"through the nodes ({outcome.recorded_s:.1f} s of /joint_states); condition number "
        f"{outcome.condition_number:.1f}",
        f"  friction error: max {np.abs(outcome.friction_error).max():.1%} over viscous and "
        f"Coulomb; payload {outcome.payload_mass:.3f} kg (true {TRUE_PAYLOAD.mass:g} kg)",
        f"  {'model':<12}{'gravity hold drift [rad]':>26}{'feedforward_pd RMS [mrad]':>28}",
    ]
    for name in MODELS:
        run = runs[name]
        held = "-" if run.drift is None else f"{run.drift:.2e}"
        lines.append(f"  {name:<12}{held:>26}{run.rms * 1e3:>28.4f}")
    before, after, exact = (runs[m] for m in MODELS)
    lines.append(
        f"  before / after: drift {before.drift:.2e} -> {after.drift:.2e} rad; tracking RMS "
        f"nominal / identified = {before.rms / after.rms:.0f}x, identified / exact = "
        f"{after.rms / exact.rms:.2f}x")
    lines.append(f"  files (rbd_identify's outputs, the plant, the recordings): {outcome.folder}")
    return "\n".join(lines)


def problems(outcome: IdentificationOutcome) -> list[str]:
    before, after, exact = (outcome.runs[m] for m in MODELS)
    out = []
    if not after.drift < MAX_IDENTIFIED_DRIFT:
        out.append(f"identified model: gravity compensation drifted {after.drift:.3g} rad "
                   f"(limit {MAX_IDENTIFIED_DRIFT:g})")
    if not before.drift > MIN_NOMINAL_DRIFT:
        out.append(f"nominal model: the arm drifted only {before.drift:.3g} rad (expected to fall,"
                   f" > {MIN_NOMINAL_DRIFT:g}): the plant is not the perturbed arm")
    if not after.rms <= MAX_RMS_VS_EXACT * exact.rms:
        out.append(f"identified model: feedforward_pd RMS {after.rms:.3g} rad, more than "
                   f"{MAX_RMS_VS_EXACT:g}x the exact model's {exact.rms:.3g} rad")
    if not after.rms * MIN_RMS_GAIN <= before.rms:
        out.append(f"identified model: feedforward_pd RMS {after.rms:.3g} rad, not "
                   f"{MIN_RMS_GAIN:g}x below the nominal model's {before.rms:.3g} rad")
    return out


def write_plot(output: Path, outcome: IdentificationOutcome) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_hold, ax_track) = plt.subplots(2, 1, figsize=(10, 7))
    for c, name in enumerate(MODELS):
        run = outcome.runs[name]
        if run.hold is not None:
            t, _, actual, _ = run.hold.arrays()
            ax_hold.semilogy(t - t[0], np.maximum(np.abs(actual - actual[0]).max(axis=1), 1e-7),
                             color=f"C{c}", label=name)
        t, desired, actual, _ = run.track.arrays()
        error = np.linalg.norm(wrap_to_pi(desired - actual), axis=1)
        ax_track.semilogy(t - t[0], np.maximum(error, 1e-7),
                          color=f"C{c}", lw=1.0, label=f"{name} (RMS {run.rms * 1e3:.3g} mrad)")
    ax_hold.axhline(MAX_IDENTIFIED_DRIFT, color="k", ls=":", lw=0.8, label="1e-3 rad")
    ax_hold.set_ylabel("max |q - q(0)| [rad]")
    ax_hold.set_xlabel("time since release [s]")
    ax_hold.set_title("gravity_compensation on the perturbed arm with its payload")
    ax_track.set_ylabel("|desired - actual| [rad]")
    ax_track.set_xlabel("time since the first waypoint [s]")
    ax_track.set_title("feedforward_pd on the validation trajectory")
    for ax in (ax_hold, ax_track):
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle("identification: nominal URDF (before), identified (after), exact plant")
    fig.tight_layout()
    path = output / "identification_before_after.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
