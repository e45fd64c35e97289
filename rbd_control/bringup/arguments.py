"""rbd_bringup's command line: its options, and each bad value refused in one line.

Every refusal is one line on stderr naming the argument, `rbd_bringup: error: argument
--duration: ...`, and exit status 2, before any node starts: the checks are argparse type
functions, and `OneLineParser.error` prints argparse's message without the usage block.
No rclpy and no numpy here: --help answers at once (--namespace imports rclpy's name check
when it is given).

--profile NAME takes a robot profile (bringup/profiles.py) present and accepted by its nodes.
--namespace NAME a ROS namespace (bringup/namespaces.py): every node of the run, its topics,
action, parameters and /clock in it.
--teleop two runs of the default arm, a leader and a follower (bringup/teleop.py), with the
options that choose their loop; the options of one robot's run refused beside it.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from rbd_control.bringup.namespaces import absolute_namespace
from rbd_control.bringup.processes import CONFIG_FILE
from rbd_control.bringup.profiles import (PROFILES_DIR, profile_file, profile_names,
                                          profile_refusal)
from rbd_control.bringup.teleop_scene import FEEDBACK_CHOICES
from rbd_control.params.controller import MODES
from rbd_control.params.simulator import ENGINES

# The excitation's shortest period (identification.excitation_trajectory's default): its
# lowest frequency is 1 / period. A longer --excite is split into whole periods of at least
# this length, each stretched so that they fill SECONDS exactly (excite.excitation_period).
EXCITATION_PERIOD_S = 10.0
TELEOP_OUTPUT = Path("teleop_output")   # --teleop's plots without --output or --log-dir


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a refused argument is one line (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number")
    return value


def seconds(text: str) -> float:
    """A finite, non-negative number of seconds."""
    value = _number(text)
    if value < 0.0:
        raise argparse.ArgumentTypeError(f"{text} s: must be 0 s or more")
    return value


def excitation_seconds(text: str) -> float:
    """Seconds of excitation: at least one period."""
    value = _number(text)
    if value < EXCITATION_PERIOD_S:
        raise argparse.ArgumentTypeError(
            f"{text} s is shorter than one excitation period ({EXCITATION_PERIOD_S:g} s)")
    return value


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def profile(text: str) -> str:
    """A profile present in config/profiles whose values its nodes accept."""
    names = profile_names()
    if text not in names:
        raise argparse.ArgumentTypeError(
            f"unknown profile {text!r}; the profiles are {', '.join(names) or 'not installed'}")
    reason = profile_refusal(profile_file(text))
    if reason:
        raise argparse.ArgumentTypeError(reason)
    return text


def namespace(text: str) -> str:
    """A ROS namespace, absolute ('left' -> '/left'; '' the root namespace)."""
    try:
        return absolute_namespace(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = OneLineParser(
        prog="rbd_bringup",
        description="Description publisher + rbd_mujoco_sim + rbd_controller, like "
        "`ros2 launch rbd_control arm.launch.py sim:=mujoco`, without ros2 launch. It ends "
        "with one line saying whether the run did what was asked; the exit status says so "
        "too (0: it did, 1: it did not, 2: a refused argument or description).",
    )
    parser.add_argument("--mode", choices=MODES, help="control law (default: the config file's)")
    parser.add_argument(
        "--description", type=Path,
        help="robot description, .urdf or .xacro (default: the default arm); without --config "
        "the controller commands every moving joint of it",
    )
    parser.add_argument(
        "xacro_args", nargs="*", metavar="name:=value",
        help="xacro arguments for a .xacro --description, as on xacro's command line",
    )
    parser.add_argument("--config", type=existing_file,
                        help=f"controller YAML (default: {CONFIG_FILE}, whose joints and "
                        "ee_link are the default arm's: with another --description only its "
                        "robot-independent settings apply)")
    parser.add_argument("--params-file", type=existing_file, action="append", default=[],
                        help="another parameter YAML after --config (e.g. rbd_identify's "
                        "friction.yaml, payload.yaml), for rbd_controller and, by its own "
                        "section, rbd_mujoco_sim; repeatable")
    parser.add_argument("--profile", type=profile, metavar="NAME",
                        help="robot profile, one of: " + ", ".join(profile_names()) +
                        f" ({PROFILES_DIR}/<name>.yaml): the gravity the robot adds, its loop, "
                        "soft-limit margins and torque rate from the vendor's figures, for the "
                        "controller (and the simulator: a plant that adds gravity), after "
                        "--config and before --params-file (which wins)")
    parser.add_argument(
        "--plant-description", type=Path, metavar="FILE",
        help="simulate this robot (.urdf or .xacro, same name:=value arguments) instead of "
        "--description, which the controller still gets: a robot whose URDF is off",
    )
    parser.add_argument("--lockstep", action="store_true",
                        help="one physics step per command (the controller's state_timeout "
                        "is then 1 s: the plant waits for it)")
    parser.add_argument("--sim", choices=ENGINES, default="mujoco",
                        help="physics engine of the simulator "
                             "(dart: pip install rbd_control[dart])")
    parser.add_argument("--demo-trajectory", action="store_true",
                        help="after holding the start pose for 0.25 s, send one demo "
                        "trajectory within the robot's limits as a FollowJointTrajectory goal, "
                        "and report its result and RMS tracking error")
    parser.add_argument("--duration", type=seconds,
                        help="stop after this many wall seconds at most (default: at "
                        "Ctrl-C); with --demo-trajectory, as soon as its result is in (a goal "
                        "still running at the end is reported, not a failure)")
    parser.add_argument("--excite", type=excitation_seconds, metavar="SECONDS",
                        help="run an excitation trajectory this long (at least one period, "
                        f"{EXCITATION_PERIOD_S:g} s; split into whole periods of "
                        f"{EXCITATION_PERIOD_S:g} s or more that fill SECONDS), after a 3 s "
                        "lead-in, record it, stop (excite.py)")
    parser.add_argument("--record", type=Path, default=Path("excitation.npz"),
                        help="where --excite writes the recording (default: excitation.npz)")
    parser.add_argument("--namespace", type=namespace, default="", metavar="NAME",
                        help="run every node in this ROS namespace (e.g. left: "
                        "/left/joint_states, /left/rbd_controller/follow_joint_trajectory), "
                        "its /clock remapped to /NAME/clock, so that runs in other namespaces "
                        "do not interfere (default: the root namespace)")
    parser.add_argument("--log-dir", type=Path,
                        help="keep the nodes' logs here (default: a temporary folder, kept "
                        "and named when the run fails)")
    parser.add_argument(
        "--no-joint-damping", action="store_true", help="ignore URDF <dynamics> in the simulator"
    )
    teleop = parser.add_argument_group(
        "teleoperation", "a leader arm moved by a simulated hand and a follower that tracks it "
        "(bringup/teleop.py; doc/howto/teleop.md)")
    teleop.add_argument("--teleop", action="store_true",
                        help="two runs of the default arm in the namespaces leader "
                        "(gravity_compensation, a hand moving it along a 20 s lap) and follower "
                        "(joint_impedance on the leader's states streamed at 50 Hz, a box on its "
                        "way); one lap (or --duration), then the figures, plots and a verdict")
    teleop.add_argument("--teleop-feedback", choices=FEEDBACK_CHOICES, default="contact",
                        help="the follower's estimated external torque on the leader's joints: "
                        "on (always), contact (only while the follower flags a contact; the "
                        "default), off")
    teleop.add_argument("--output", type=Path,
                        help="where --teleop writes its plots (default: --log-dir, else "
                        f"./{TELEOP_OUTPUT})")
    args = parser.parse_args(argv)
    _check_teleop(parser, args, argv if argv is not None else sys.argv[1:])
    return args


# What --teleop decides itself: its robot (the default arm, twice), namespaces, modes and goals
NOT_WITH_TELEOP = ("--mode", "--description", "--config", "--profile", "--plant-description",
                   "--sim", "--demo-trajectory", "--excite", "--record", "--namespace")
ONLY_WITH_TELEOP = ("--teleop-feedback", "--output")


def _given(argv, option) -> bool:
    return any(arg == option or arg.startswith(option + "=") for arg in argv)


def _check_teleop(parser, args, argv) -> None:
    """--teleop's own choices refused beside it, and its options without it: one line."""
    if args.teleop:
        clash = next((option for option in NOT_WITH_TELEOP if _given(argv, option)), None)
        if clash or args.xacro_args:
            parser.error(f"argument --teleop: not allowed with {clash or 'name:=value'} (it "
                         "runs the default arm twice, in the namespaces leader and follower, "
                         "in its own modes)")
    else:
        alone = next((option for option in ONLY_WITH_TELEOP if _given(argv, option)), None)
        if alone:
            parser.error(f"argument {alone}: only with --teleop")
