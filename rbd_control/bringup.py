"""rbd_bringup: the arm.launch.py bringup (sim:=mujoco) without `ros2 launch`.

    rbd_bringup [--mode computed_torque] [--description robot.urdf] [--config arm_controller.yaml]
                [--lockstep] [--demo-trajectory] [--duration 20]

launch and launch_ros cannot be installed here, so this one command does what
arm.launch.py does with sim:=mujoco, from the same config/arm_controller.yaml:

    this process      the robot_description publisher (std_msgs/String, transient_local,
                      as robot_state_publisher) and, with --demo-trajectory, one trajectory
    child process     rbd_mujoco_sim      (python -m rbd_control.sim.ros_node)
    child process     rbd_controller      (python -m rbd_control.ros.controller_node)

Why child processes and not one executor with every node: the simulator and the
controller each run a 1 kHz loop in Python; in one process they would share one GIL,
so every state→command round trip would queue behind the other node's callbacks and
the latency measured would be an artefact of the bringup, not of the controller. In
separate processes they run on separate cores, as they do under `ros2 launch`, and a
crash of one does not take the other down (the controller's watchdog can act).
The light nodes (description, trajectory) stay in this process.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import yaml

from rbd_control.control.parameters import MODES
from rbd_control.demo.data import DEFAULT_ARM_HOME, demo_waypoints
from rbd_control.ros.conversions import joint_trajectory_msg, seconds

CONTROLLER_MODULE = "rbd_control.ros.controller_node"
SIMULATOR_MODULE = "rbd_control.sim.ros_node"
CONTROLLER_NODE = "rbd_controller"
SIMULATOR_NODE = "rbd_mujoco_sim"
CONFIG_FILE = "config/arm_controller.yaml"



# --- configuration ------------------------------------------------------------------


def find_config_file(relative: str = CONFIG_FILE) -> Path:
    """config/… from the installed share/rbd_control, else from the source checkout."""
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )

        try:
            installed = Path(get_package_share_directory("rbd_control")) / relative
            if installed.is_file():
                return installed
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    source = Path(__file__).resolve().parent.parent / relative
    if source.is_file():
        return source
    raise FileNotFoundError(f"{relative} is neither installed in share/rbd_control nor in {source.parent}")


def controller_parameters(config_file: Path) -> dict:
    """The rbd_controller parameters of a `/**: ros__parameters:` (or node-named) YAML."""
    document = yaml.safe_load(Path(config_file).read_text()) or {}
    for key in ("/**", CONTROLLER_NODE, f"/{CONTROLLER_NODE}"):
        if key in document:
            return dict(document[key].get("ros__parameters", {}))
    raise ValueError(f"{config_file} has no '/**' or '{CONTROLLER_NODE}' ros__parameters section")


@dataclass
class BringupConfig:
    """What arm.launch.py's arguments choose, plus the simulator's own settings."""

    urdf: str
    config_file: Path
    mode: str | None = None  # None: the config file's mode
    lockstep: bool = False
    initial_positions: dict[str, float] = field(default_factory=dict)
    joint_damping: bool = True
    extra_controller_parameters: dict = field(default_factory=dict)
    log_dir: Path | None = None  # None: a temporary directory

    def joints(self) -> list[str]:
        return list(controller_parameters(self.config_file).get("joints") or [])


# --- child processes ---------------------------------------------------------------


class NodeProcess:
    """One node in a child process, its output in a log file."""

    def __init__(self, name: str, module: str, ros_args: Sequence[str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, "--ros-args", *ros_args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 5.0) -> int:
        """SIGINT for a clean rclpy shutdown; SIGKILL if it does not end in time."""
        if self.alive():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode

    def log_tail(self, lines: int = 20) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text().splitlines()[-lines:])


def _write_params(path: Path, node: str, parameters: dict) -> Path:
    path.write_text(yaml.safe_dump({node: {"ros__parameters": parameters}}))
    return path


class Bringup:
    """Starts the simulator and the controller as child processes; use as a context manager.

    The robot_description itself is published by `DescriptionPublisher` in the caller's
    process (it needs an rclpy context, which the caller owns).
    """

    def __init__(self, config: BringupConfig) -> None:
        self.config = config
        self._tmp = None
        self.log_dir = config.log_dir
        self.simulator: NodeProcess | None = None
        self.controller: NodeProcess | None = None

    def __enter__(self) -> "Bringup":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        if self.log_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rbd_bringup_")
            self.log_dir = Path(self._tmp.name)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.simulator = self.start_simulator()
        self.controller = self.start_controller()

    def start_simulator(self) -> NodeProcess:
        joints = self.config.joints()
        parameters = {
            "lockstep": self.config.lockstep,
            "joint_damping": self.config.joint_damping,
            "publish_clock": True,
            "publish_latency": True,
            "use_sim_time": False,  # it is the clock
        }
        if joints:
            parameters["joints"] = joints
        if self.config.initial_positions:
            order = joints or list(self.config.initial_positions)
            parameters["joints"] = order
            parameters["initial_positions"] = [
                float(self.config.initial_positions.get(j, 0.0)) for j in order
            ]
        params = _write_params(self.log_dir / "simulator.yaml", SIMULATOR_NODE, parameters)
        return NodeProcess(
            SIMULATOR_NODE, SIMULATOR_MODULE, ["--params-file", str(params)],
            self.log_dir / "simulator.log",
        )

    def start_controller(self) -> NodeProcess:
        # The same YAML arm.launch.py gives rbd_controller, then the launch arguments on top.
        overrides = {"use_sim_time": True, **self.config.extra_controller_parameters}
        if self.config.mode:
            overrides["mode"] = self.config.mode
        params = _write_params(self.log_dir / "controller_overrides.yaml", CONTROLLER_NODE, overrides)
        return NodeProcess(
            CONTROLLER_NODE, CONTROLLER_MODULE,
            ["--params-file", str(self.config.config_file), "--params-file", str(params)],
            self.log_dir / "controller.log",
        )

    def check_alive(self) -> None:
        """Raise RuntimeError with the log tail of a child that has exited."""
        for child in (self.simulator, self.controller):
            if child is not None and not child.alive():
                raise RuntimeError(
                    f"{child.name} exited with code {child.process.returncode}:\n{child.log_tail()}"
                )

    def stop(self) -> None:
        for child in (self.controller, self.simulator):
            if child is not None:
                child.stop()


# --- in-process nodes --------------------------------------------------------------


def make_description_publisher(node, urdf: str):
    """Publish `urdf` on /robot_description the way robot_state_publisher does."""
    from std_msgs.msg import String

    from rbd_control.ros.qos import ROBOT_DESCRIPTION_QOS

    publisher = node.create_publisher(String, "/robot_description", ROBOT_DESCRIPTION_QOS)
    publisher.publish(String(data=urdf))
    return publisher


class _LoopWatcher:
    """Counts states and commands so the user sees the loop is closed (a line every 2 s)."""

    def __init__(self, node) -> None:
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.states = self.commands = 0
        self.last_state = None
        self._reported_at = time.monotonic()
        node.create_subscription(JointState, "/joint_states", self._on_state, 10)
        node.create_subscription(Float64MultiArray, "/effort_controller/commands", self._on_command, 10)

    def _on_state(self, msg) -> None:
        self.states += 1
        self.last_state = msg

    def _on_command(self, msg) -> None:
        self.commands += 1

    def report(self, period: float = 2.0) -> None:
        if time.monotonic() - self._reported_at < period or self.last_state is None:
            return
        self._reported_at = time.monotonic()
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
    parser.add_argument("--description", type=Path, help="URDF file (default: the default arm)")
    parser.add_argument("--config", type=Path, help=f"controller YAML (default: {CONFIG_FILE})")
    parser.add_argument("--lockstep", action="store_true", help="one physics step per command")
    parser.add_argument("--demo-trajectory", action="store_true", help="send one demo trajectory")
    parser.add_argument("--duration", type=float, help="stop after this many wall seconds")
    parser.add_argument("--excite", type=float, metavar="SECONDS",
                        help="run an excitation trajectory this long, record it, stop (excite.py)")
    parser.add_argument("--record", type=Path, default=Path("excitation.npz"),
                        help="where --excite writes the recording (default: excitation.npz)")
    parser.add_argument("--log-dir", type=Path, help="keep the nodes' logs here (default: a temp dir)")
    parser.add_argument(
        "--no-joint-damping", action="store_true", help="ignore URDF <dynamics> in the simulator"
    )
    return parser.parse_args(argv)


def config_from_args(args: argparse.Namespace) -> BringupConfig:
    from rbd_control.description import default_arm_urdf

    urdf = args.description.read_text() if args.description else default_arm_urdf()
    return BringupConfig(
        urdf=urdf,
        config_file=args.config or find_config_file(),
        mode=args.mode or ("feedforward_pd" if args.excite else None),
        lockstep=args.lockstep,
        initial_positions={} if args.description else dict(DEFAULT_ARM_HOME),
        joint_damping=not args.no_joint_damping,
        log_dir=args.log_dir,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    config = config_from_args(args)
    from rclpy.executors import ExternalShutdownException
    from trajectory_msgs.msg import JointTrajectory

    from rbd_control.ros.run import ros_session

    with ros_session("rbd_bringup") as (node, executor):
        make_description_publisher(node, config.urdf)
        watcher = _LoopWatcher(node)
        trajectory_pub = node.create_publisher(JointTrajectory, f"/{CONTROLLER_NODE}/joint_trajectory", 10)
        sent = not args.demo_trajectory
        excitation = None
        if args.excite:
            from rbd_control.excite import Excitation
            excitation = Excitation(node, config.urdf, args.excite, args.record, config.joints())
        started = time.monotonic()
        with Bringup(config) as bringup:
            print(f"rbd_bringup: logs in {bringup.log_dir}; Ctrl-C to stop", flush=True)
            try:
                while args.duration is None or time.monotonic() - started < args.duration:
                    executor.spin_once(timeout_sec=0.05)
                    bringup.check_alive()
                    # Send only once the controller answers states: before that it would refuse.
                    if not sent and watcher.commands > 100:
                        joints = config.joints() or list(watcher.last_state.name)
                        home = dict(zip(watcher.last_state.name, watcher.last_state.position))
                        trajectory_pub.publish(joint_trajectory_msg(joints, demo_waypoints(home, joints)))
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
                print(f"rbd_bringup: {error}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
