"""rbd_bringup: the arm.launch.py bringup (sim:=mujoco) without `ros2 launch`.

    rbd_bringup [--mode computed_torque] [--description robot.urdf|robot.urdf.xacro]
                [name:=value ...] [--config arm_controller.yaml] [--params-file more.yaml ...]
                [--plant-description real_robot.urdf]
                [--lockstep] [--sim mujoco|dart] [--demo-trajectory] [--duration 20]

launch and launch_ros cannot be installed here, so this one command does what
arm.launch.py does with sim:=mujoco, from the same config/arm_controller.yaml:

    this process      the robot_description publisher (std_msgs/String, transient_local,
                      as robot_state_publisher) and, with --demo-trajectory, one trajectory
    child process     rbd_mujoco_sim      (python -m rbd_control.ros.simulator.node), MuJoCo or,
                                          with --sim dart, DART (the node's `engine`)
    child process     rbd_controller      (python -m rbd_control.ros.controller.node)

The child processes (and why they are processes) are in rbd_control/bringup/processes.py;
the light nodes (description, trajectory) stay in this process. A .xacro description is
expanded with the name:=value arguments by rbd_control/description/files.py, as `xacro`
does in a ROS launch file; a bad file ends the command with one line naming it.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Sequence

from rbd_control.bringup.processes import (CONFIG_FILE, CONTROLLER_NODE, Bringup,
                                           BringupConfig, excitation_parameters,
                                           find_config_file)
from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
from rbd_control.description.files import DescriptionError, parse_mappings, read_description
from rbd_control.params.controller import MODES
from rbd_control.params.simulator import ENGINES

# rbd_control.ros.conversions is imported where it is used: it loads the dynamics kernels
# (numba compiles them on a fresh install's first start, minutes), and --help must not wait.

SPIN_S = 0.05   # the main loop's longest wait for the executor


# --- in-process nodes --------------------------------------------------------------


class _LoopWatcher:
    """Counts states and commands so the user sees the loop is closed (a line every 2 s).
    Drained (ros/drained.py) after each spin of the main loop, at most SPIN_S apart."""

    def __init__(self, drained) -> None:
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.states = self.commands = 0
        self.last_state = None
        self._reported_at = time.monotonic()
        depth = 1000   # ~1 s of a 1 kHz loop: what a slow moment of this process queues
        drained.subscribe(JointState, "/joint_states", self._on_state, depth)
        drained.subscribe(Float64MultiArray, "/effort_controller/commands", self._on_command,
                          depth)

    def _on_state(self, msg) -> None:
        self.states += 1
        self.last_state = msg

    def _on_command(self, msg) -> None:
        self.commands += 1

    def report(self, period: float = 2.0) -> None:
        if time.monotonic() - self._reported_at < period or self.last_state is None:
            return
        self._reported_at = time.monotonic()
        from rbd_control.ros.conversions import seconds
        stamp = self.last_state.header.stamp
        print(
            f"rbd_bringup: sim t = {seconds(stamp):7.2f} s, "
            f"{self.states} joint states, {self.commands} effort commands seen",
            flush=True,
        )


# --- command line -------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="rbd_bringup",
        description="Description publisher + rbd_mujoco_sim + rbd_controller, like "
        "`ros2 launch rbd_control arm.launch.py sim:=mujoco`, without ros2 launch.",
    )
    parser.add_argument("--mode", choices=MODES, help="control law (default: the config file's)")
    parser.add_argument(
        "--description", type=Path,
        help="robot description, .urdf or .xacro (default: the default arm)",
    )
    parser.add_argument(
        "xacro_args", nargs="*", metavar="name:=value",
        help="xacro arguments for a .xacro --description, as on xacro's command line",
    )
    parser.add_argument("--config", type=Path, help=f"controller YAML (default: {CONFIG_FILE})")
    parser.add_argument("--params-file", type=Path, action="append", default=[],
                        help="another rbd_controller parameter YAML after --config (e.g. "
                        "rbd_identify's friction.yaml, payload.yaml); repeatable")
    parser.add_argument(
        "--plant-description", type=Path, metavar="FILE",
        help="simulate this robot (.urdf or .xacro, same name:=value arguments) instead of "
        "--description, which the controller still gets: a robot whose URDF is off",
    )
    parser.add_argument("--lockstep", action="store_true", help="one physics step per command")
    parser.add_argument("--sim", choices=ENGINES, default="mujoco",
                        help="physics engine of the simulator "
                             "(dart: pip install rbd_control[dart])")
    parser.add_argument("--demo-trajectory", action="store_true", help="send one demo trajectory")
    parser.add_argument("--duration", type=float, help="stop after this many wall seconds")
    parser.add_argument("--excite", type=float, metavar="SECONDS",
                        help="run an excitation trajectory this long, record it, stop "
                             "(excite.py)")
    parser.add_argument("--record", type=Path, default=Path("excitation.npz"),
                        help="where --excite writes the recording (default: excitation.npz)")
    parser.add_argument("--log-dir", type=Path,
                        help="keep the nodes' logs here (default: a temp dir)")
    parser.add_argument(
        "--no-joint-damping", action="store_true", help="ignore URDF <dynamics> in the simulator"
    )
    return parser.parse_args(argv)


def config_from_args(args: argparse.Namespace) -> BringupConfig:
    from rbd_control.description import default_arm_urdf

    mappings = parse_mappings(args.xacro_args)
    if mappings and not args.description:
        raise DescriptionError("name:=value arguments need a .xacro --description")
    urdf = read_description(args.description, mappings) if args.description else default_arm_urdf()
    plant = read_description(args.plant_description, mappings) if args.plant_description else None
    return BringupConfig(
        urdf=urdf,
        config_file=args.config or find_config_file(),
        mode=args.mode or ("feedforward_pd" if args.excite else None),
        lockstep=args.lockstep,
        engine=args.sim,
        initial_positions={} if args.description else dict(DEFAULT_ARM_HOME),
        joint_damping=not args.no_joint_damping,
        controller_params_files=list(args.params_file),
        plant_urdf=plant,
        log_dir=args.log_dir,
        extra_controller_parameters=excitation_parameters(args.lockstep) if args.excite else {},
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.sim == "dart" and importlib.util.find_spec("dartpy") is None:
        print("rbd_bringup: error: --sim dart needs dartpy: pip install rbd_control[dart]",
              file=sys.stderr)
        return 2
    try:
        config = config_from_args(args)
    except DescriptionError as error:
        print(f"rbd_bringup: error: {error}", file=sys.stderr)
        return 2
    from rclpy.executors import ExternalShutdownException
    from trajectory_msgs.msg import JointTrajectory

    from rbd_control.ros.conversions import joint_trajectory_msg
    from rbd_control.ros.description_publisher import make_description_publisher
    from rbd_control.ros.drained import DrainedSubscriptions
    from rbd_control.ros.run import exit_if_signalled, ros_session

    # args=[]: rclpy would read the xacro arguments in sys.argv as (deprecated) remappings
    with ros_session("rbd_bringup", args=[]) as (node, executor):
        make_description_publisher(node, config.urdf)
        drained = DrainedSubscriptions(node)
        watcher = _LoopWatcher(drained)
        trajectory_pub = node.create_publisher(JointTrajectory,
                                               f"/{CONTROLLER_NODE}/joint_trajectory", 10)
        sent = not args.demo_trajectory
        excitation = None
        if args.excite:
            from rbd_control.bringup.excite import Excitation
            excitation = Excitation(node, drained, config.urdf, args.excite, args.record,
                                    config.joints())
        started = time.monotonic()
        with Bringup(config) as bringup:
            print(f"rbd_bringup: logs in {bringup.log_dir}; Ctrl-C to stop", flush=True)
            try:
                while args.duration is None or time.monotonic() - started < args.duration:
                    executor.spin_once(timeout_sec=SPIN_S)
                    if not node.context.ok():   # Ctrl-C or SIGTERM (run.ros_session)
                        break
                    drained.drain()
                    bringup.check_alive()
                    # Send only once the controller answers states: before that it would refuse.
                    if not sent and watcher.commands > 100:
                        joints = config.joints() or list(watcher.last_state.name)
                        home = dict(zip(watcher.last_state.name, watcher.last_state.position))
                        waypoints = demo_waypoints(home, joints)
                        trajectory_pub.publish(joint_trajectory_msg(joints, waypoints))
                        print("rbd_bringup: demo trajectory sent", flush=True)
                        sent = True
                    if excitation is not None and watcher.commands > 100:
                        if excitation.started is None:
                            excitation.start()
                        elif excitation.poll():
                            break
                    watcher.report()
            except (KeyboardInterrupt, ExternalShutdownException):
                pass
            except RuntimeError as error:
                # rclpy's RCLError ("context is not valid") when a signal shut it down mid-wait
                if node.context.ok():
                    print(f"rbd_bringup: {error}", file=sys.stderr)
                    return 1
    return exit_if_signalled(0)


if __name__ == "__main__":
    sys.exit(main())
