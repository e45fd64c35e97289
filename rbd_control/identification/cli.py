"""rbd_identify: identify a robot's inertial parameters, friction (and a payload) from a recording.

    rbd_identify --recording excitation.npz --urdf robot.urdf --output identified/
    rbd_identify --recording bag_dir/ --urdf robot.urdf --payload-link tool0 --output payload/
    rbd_identify --recording arm_only.npz --urdf panda.urdf --fixed panda_finger_joint1=0.02

Joints of the URDF that the recording lacks (a gripper's) are held: welded at --fixed's value,
else at the value a bag's other source recorded, else at the URDF zero (held_joints.py); the
command says which, once, and identified.urdf keeps them fixed there.

Writes identified.urdf, friction.yaml (rbd_controller parameters), payload.yaml (with
--payload-link), report.txt, held_back_torques.png (measured vs predicted on the last
--holdout of the recording, which the fit never sees).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from rbd_control.dynamics import RbdError, load_urdf

from rbd_control.dynamics.friction import DEFAULT_EPSILON
from rbd_control.identification.filtering import DEFAULT_CUTOFF_HZ, filtered_states
from rbd_control.identification.fit import fit
from rbd_control.identification.held_joints import (describe, held_positions, parse_fixed,
                                                    weld_joints)
from rbd_control.identification.recording import JOINT_STATES_TOPIC, read_recording
from rbd_control.identification.result import (CONFIDENCE_BLOCKS, relative_rms,
                                               sliding_relative_rms, worst_block_relative_rms)

# the section of friction.yaml and payload.yaml: rbd_controller in any namespace (a bare
# "rbd_controller" matches only /rbd_controller: rbd_bringup --namespace refuses it)
NODE_NAME = "/**/rbd_controller"


class ProgressBar:
    """One line on stderr: [#####.....]  45 % stage."""

    def __init__(self, stream=None, width=30):
        self.stream = stream or sys.stderr
        self.width, self.shown = width, None
        self.open = False      # a line without its newline yet

    def close(self):
        """End the bar's line (before an error, so that it is not glued to the bar)."""
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False

    def __call__(self, fraction, stage):
        filled = int(round(self.width * fraction))
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {100 * fraction:3.0f} % {stage}"
        if line != self.shown:
            self.stream.write("\r" + line.ljust(self.width + 24))
            self.stream.flush()
            self.shown, self.open = line, True
        if fraction >= 1.0:
            self.close()


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="rbd_identify", description=__doc__.split("\n")[0])
    parser.add_argument("--recording", required=True, type=Path,
                        help="an .npz (rbd_bringup --excite, or the demo's recording.npz) or a "
                             "rosbag2 of sensor_msgs/JointState")
    parser.add_argument("--urdf", type=Path, help="robot description (default: the default arm)")
    parser.add_argument("--output", type=Path, default=Path("identified"))
    parser.add_argument("--payload-link", help="fit only a payload on this link; keep the arm")
    parser.add_argument("--no-friction", action="store_true", help="fit no joint friction")
    parser.add_argument("--holdout", type=float, default=0.2,
                        help="fraction of the recording (its end) held back for validation")
    parser.add_argument("--cutoff", type=float, default=DEFAULT_CUTOFF_HZ,
                        help="zero-phase low-pass cut-off, Hz")
    parser.add_argument("--epsilon", type=float, default=DEFAULT_EPSILON,
                        help="Coulomb friction smoothing velocity, rad/s")
    parser.add_argument("--topic", default=JOINT_STATES_TOPIC, help="JointState topic in a bag")
    parser.add_argument("--fixed", action="append", default=[], metavar="NAME=VALUE",
                        help="hold a joint the recording lacks at VALUE (rad or m), welded; "
                             "repeat per joint. Unnamed missing joints are held at the value a "
                             "bag's other source recorded, else at the URDF zero")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    progress = ProgressBar()
    try:
        check_options(args)
        return run(args, progress)
    except (RbdError, OSError, MemoryError) as error:
        progress.close()
        message = str(error) or type(error).__name__
        print(f"rbd_identify: {' '.join(message.split())}", file=sys.stderr)   # one line
        return 2


def check_options(args):
    """The numeric options, before any work."""
    for name, value, low, high in (("--holdout", args.holdout, 0.0, 0.9),
                                   ("--cutoff", args.cutoff, 0.0, np.inf),
                                   ("--epsilon", args.epsilon, 0.0, np.inf)):
        if not (np.isfinite(value) and low < value < high):
            bound = f"(0, {high:g})" if np.isfinite(high) else "a positive finite number"
            raise RbdError(f"{name} must be in {bound}, got {value}")


def run(args, progress=None) -> int:
    if args.urdf is None:
        from rbd_control.description import default_arm_urdf
        urdf = default_arm_urdf()
    else:
        urdf = args.urdf.read_text()
    fixed = parse_fixed(args.fixed)
    read = read_recording(args.recording, args.topic)
    held = held_positions(load_urdf(urdf), read.joints, fixed, read.other_positions)
    held_line = describe(held, fixed, read.other_positions) if held else None
    urdf = weld_joints(urdf, held)
    model = load_urdf(urdf)
    if args.payload_link is not None and args.payload_link not in model.link_body:
        raise RbdError(f"--payload-link {args.payload_link!r} is not a link of robot "
                       f"{model.name!r}")
    recording = read.in_order(model.joint_names)
    nyquist = 0.5 / np.median(np.diff(recording.t))
    if not args.cutoff < nyquist:
        raise RbdError(f"--cutoff {args.cutoff} Hz is not below the recording's Nyquist "
                       f"frequency {nyquist:.4g} Hz")
    train, held = recording.split(args.holdout)
    result = fit(model, train.t, train.q, train.tau, train.qd, friction=not args.no_friction,
                 payload_link=args.payload_link, cutoff_hz=args.cutoff, epsilon=args.epsilon,
                 progress=progress or ProgressBar())
    t, q, qd, qdd, tau = filtered_states(held.t, held.q, held.tau, held.qd, args.cutoff)
    predicted = result.predict(q, qd, qdd)
    args.output.mkdir(parents=True, exist_ok=True)
    written = [_write(args.output / "identified.urdf", result.to_urdf(urdf)),
               _write(args.output / "friction.yaml", result.friction_yaml(NODE_NAME))]
    if result.payload is not None:
        written.append(_write(args.output / "payload.yaml", payload_yaml(result.payload)))
    report = report_text(args, model, recording, result, tau, predicted, qd, held_line)
    written.append(_write(args.output / "report.txt", report))
    plot = plot_held_back(args.output / "held_back_torques.png", model.joint_names, t, tau,
                          predicted)
    print(report)
    if plot is None:
        print("no plot: matplotlib (the optional plotting extra) is not installed")
    for path in written + ([plot] if plot else []):
        print(f"wrote {path}")
    return 0


def _write(path, text):
    path.write_text(text)
    return path


def payload_yaml(payload, node_name=NODE_NAME) -> str:
    inertia = payload.inertia
    values = [inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2],
              inertia[2, 2]]
    return "\n".join([
        f"{node_name}:", "  ros__parameters:",
        f"    payload.link: {payload.link}",
        f"    payload.mass: {payload.mass!r}",
        f"    payload.com: [{', '.join(repr(float(c)) for c in payload.com)}]",
        "    # about the centre of mass, link frame: [ixx, ixy, ixz, iyy, iyz, izz]",
        f"    payload.inertia: [{', '.join(repr(float(v)) for v in values)}]", ""])


def report_text(args, model, recording, result, tau, predicted, qd, held_line=None) -> str:
    slid = sliding_relative_rms(tau, predicted, qd, result.friction.epsilon)
    every = relative_rms(tau, predicted)
    worst = worst_block_relative_rms(tau, predicted)
    size = np.sqrt(np.mean(np.square(tau), axis=0))
    lines = [
        f"rbd_identify: {model.name}, {model.nq} joints",
        f"recording {args.recording}: {len(recording.t)} samples over "
        f"{recording.t[-1] - recording.t[0]:.1f} s; the last {args.holdout:.0%} held back",
    ] + ([held_line + " (identified.urdf keeps them fixed there)"] if held_line else []) + [
        f"filter: Butterworth filtfilt, cut-off {args.cutoff} Hz; friction epsilon "
        f"{result.friction.epsilon} rad/s",
        result.base.describe(),
        f"condition number of the weighted base regressor: {result.condition_number:.1f}",
        "",
        f"{'joint':<16}{'residual N m':>14}{'held-back rel. RMS':>20}{'confidence':>12}"
        f"{'while sliding':>15}{'torque RMS':>12}{'viscous':>10}{'coulomb':>10}",
    ]
    for j, name in enumerate(model.joint_names):
        lines.append(f"{name:<16}{result.residual_rms[j]:>14.4g}{every[j]:>20.2%}"
                     f"{worst[j]:>12.2%}{slid[j]:>15.2%}{size[j]:>12.4g}"
                     f"{result.friction.viscous[j]:>10.4g}{result.friction.coulomb[j]:>10.4g}")
    if result.payload is not None:
        p = result.payload
        lines += ["", f"payload on {p.link}: {p.mass:.4f} kg, com {np.round(p.com, 4).tolist()} m",
                  f"  inertia about the com {np.round(p.inertia, 6).tolist()} kg m^2"]
    lines += ["", f"'confidence': the held-back relative RMS of the worst of {CONFIDENCE_BLOCKS} "
              "consecutive blocks of the held-back samples: how far each joint's model can be "
              "trusted on data the fit never saw (a joint with small torques, 'torque RMS', "
              "shows its error largest).",
              "'while sliding': samples where the joint moves faster than 5 epsilon; in stick"
              " the friction torque is anything within +-f_c and no friction law predicts it."]
    return "\n".join(lines) + "\n"


def plot_held_back(path, joint_names, t, measured, predicted):
    """The plot's path, or None without matplotlib (an optional extra)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(joint_names), 1, sharex=True,
                             figsize=(9, 1.8 * len(joint_names) + 1))
    for j, (ax, name) in enumerate(zip(np.atleast_1d(axes), joint_names)):
        ax.plot(t, measured[:, j], lw=1.2, label="measured")
        ax.plot(t, predicted[:, j], lw=0.9, ls="--", label="identified model")
        ax.set_ylabel(f"{name}\nN m", fontsize=8)
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(loc="upper right", fontsize=8)
    np.atleast_1d(axes)[-1].set_xlabel("time, s (held-back part of the recording)")
    fig.suptitle("Joint torques on data the fit never saw")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
