"""The child processes of rbd_bringup (and the demo): rbd_mujoco_sim and rbd_controller.

    BringupConfig     what arm.launch.py's arguments choose, plus the simulator's settings
    Bringup           starts both nodes as child processes (a context manager)
    NodeProcess       one node in a child process, its output in a log file (through
                      piped_log.PipedLog, as ros2 launch takes it)

Why child processes and not one executor with every node: the simulator and the
controller each run a 1 kHz loop in Python; in one process they would share one GIL,
so every state->command round trip would queue behind the other node's callbacks and
the latency measured would be an artefact of the bringup, not of the controller. In
separate processes they run on separate cores, as they do under `ros2 launch`, and a
crash of one does not take the other down (the controller's watchdog can act).
No rclpy here: the nodes' parameters go to them as --params-file YAML.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import yaml

from rbd_control.bringup.namespaces import namespace_ros_args, section_matches
from rbd_control.bringup.piped_log import PipedLog

CONTROLLER_MODULE = "rbd_control.ros.controller.node"
SIMULATOR_MODULE = "rbd_control.ros.simulator.node"
CONTROLLER_NODE = "rbd_controller"
SIMULATOR_NODE = "rbd_mujoco_sim"
CONFIG_FILE = "config/arm_controller.yaml"
STOP_WITHIN_S = 1.5     # for both nodes to end after SIGINT, then SIGKILL (Bringup.stop)
# What the default arm's config names of the default arm itself: with another description only
# the rest of it applies (robot_parameters)
ROBOT_SPECIFIC = ("joints", "ee_link", "gains")


# --- configuration ------------------------------------------------------------------


# In lock step the loop is known: a state every physics step (1 ms), its command acting over
# the next one. The controller designs its default gains for that loop (laws/loop_design.py),
# not for the busy 250 Hz / 10 ms of its defaults.
LOCKSTEP_LOOP = {"expected_state_period": 0.001, "expected_delay": 0.001}
# An excitation drags the joints through friction the model does not know: it takes the
# stiffest gains the loop's margins allow.
EXCITATION_BANDWIDTH = {"bandwidth_hz": 30.0}
# rbd_mujoco_sim in real time on this 2-core machine: a state every 1 ms (97 % of them answered
# quiet, 78 % with two busy loops), the command out p99 1.3 ms after it quiet, 5.1 ms loaded
# (bench/latency.py, doc/benchmarks.md). A real-time run declares this loop (before the user's
# files and profiles: a file that declares the loop of a real robot wins) instead of the
# defaults' busy 250 Hz / 10 ms. Their 3.5 Hz gains moved the demo plant's wrist_3 (0.3 N m of
# Coulomb friction, default gains sized on 9e-5 kg m^2) 0.02 rad of the 3 rad an excitation
# asked, where this loop's 7 Hz gains move it 0.7 rad with 5 ms of delay (ROS-free); and they
# left the demo's box pressed 6.6-8 N m for ~110 ms before the push reached the collision
# level, against 8 ms with this loop (control/contact/ in lock step).
REALTIME_SIM_LOOP = {"expected_state_period": 0.002, "expected_delay": 0.005}


def simulator_loop(lockstep: bool) -> dict:
    """The controller parameters of the loop our simulator runs: exact in lock step, measured
    on this machine in real time."""
    return dict(LOCKSTEP_LOOP if lockstep else REALTIME_SIM_LOOP)


def simulated_plant_parameters(lockstep: bool) -> dict:
    """What rbd_controller takes, before any file of the user's (who may turn it off), when our
    simulator (rbd_bringup, arm.launch.py sim:=mujoco|dart) is its plant. The simulator reports
    the effort it applied, the torque in force however late the command came, which keeps the
    contact observer's free-motion residual below the contact levels in real time
    (contact.use_measured_effort; bench/contact_realtime.py); and in real time the loop it runs
    (lock step's is exact: Bringup.start_controller gives it after every file)."""
    return {"contact.use_measured_effort": True, **({} if lockstep else simulator_loop(False))}


def find_config_file(relative: str = CONFIG_FILE) -> Path:
    """config/… from the installed share/rbd_control, else from the source checkout."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            installed = Path(get_package_share_directory("rbd_control")) / relative
            if installed.is_file():
                return installed
        except (PackageNotFoundError, OSError):  # OSError: no AMENT_PREFIX_PATH at all
            pass
    except ImportError:
        pass
    # pip put share/rbd_control under the environment's prefix: found without
    # AMENT_PREFIX_PATH (a venv activated without scripts/ros_env.sh)
    in_prefix = Path(sys.prefix) / "share" / "rbd_control" / relative
    if in_prefix.is_file():
        return in_prefix
    source = Path(__file__).resolve().parents[2] / relative   # in the checkout's root
    if source.is_file():
        return source
    raise FileNotFoundError(f"{relative} is not installed in share/rbd_control of "
                            f"AMENT_PREFIX_PATH or {sys.prefix}: source scripts/ros_env.sh "
                            "(pip venv) or install/setup.bash (colcon)")


def controller_parameters(config_file: Path, namespace: str = "") -> dict:
    """The parameters a `/**: ros__parameters:` (or node-named) YAML gives rbd_controller in
    `namespace`: every section that applies to it (section_matches), later ones winning."""
    document = yaml.safe_load(Path(config_file).read_text()) or {}
    sections = [section.get("ros__parameters", {}) for key, section in document.items()
                if section_matches(str(key), f"{namespace}/{CONTROLLER_NODE}")]
    if not sections:
        raise ValueError(f"{config_file} has no '/**' or '{CONTROLLER_NODE}' ros__parameters "
                         "section")
    return {name: value for section in sections for name, value in section.items()}


def robot_parameters(config_file: Path, joints) -> dict:
    """The controller parameters of `config_file` that hold for any robot, with `joints`
    (another robot's: its every moving joint) instead of the default arm's."""
    parameters = {name: value for name, value in controller_parameters(config_file).items()
                  if name.split(".")[0] not in ROBOT_SPECIFIC}
    return {**parameters, "joints": list(joints)}


@dataclass
class BringupConfig:
    """What arm.launch.py's arguments choose, plus the simulator's own settings."""

    urdf: str
    # the controller's YAML; None: robot_parameters instead (another robot without a config)
    config_file: Path | None
    mode: str | None = None  # None: the config file's mode
    lockstep: bool = False
    engine: str = "mujoco"   # the simulator's physics engine: mujoco or dart
    initial_positions: dict[str, float] = field(default_factory=dict)
    joint_damping: bool = True
    extra_controller_parameters: dict = field(default_factory=dict)
    # more rbd_controller --params-file YAMLs after config_file (rbd_identify's friction.yaml,
    # payload.yaml), before extra_controller_parameters
    controller_params_files: list[Path] = field(default_factory=list)
    # the simulated robot when it is not `urdf` (rbd_mujoco_sim's plant_description), and
    # rbd_mujoco_sim parameters on top (payload.*, stiff_friction)
    plant_urdf: str | None = None
    extra_simulator_parameters: dict = field(default_factory=dict)
    # rbd_mujoco_sim --params-file YAMLs before its own parameters (a robot profile's)
    simulator_params_files: list[Path] = field(default_factory=list)
    log_dir: Path | None = None  # None: a temporary directory
    robot_parameters: dict = field(default_factory=dict)   # when config_file is None
    # both nodes' ROS namespace ('/left', namespaces.absolute_namespace), their /clock in it;
    # '': the root namespace and the global /clock
    namespace: str = ""

    def joints(self) -> list[str]:
        parameters = (controller_parameters(self.config_file, self.namespace) if self.config_file
                      else self.robot_parameters)
        return list(parameters.get("joints") or [])


# --- child processes ---------------------------------------------------------------


class NodeProcess:
    """One node in a child process, its output in a log file (through a PipedLog)."""

    def __init__(self, name: str, module: str, ros_args: Sequence[str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        self._interrupted = False
        self._log = PipedLog(log_path)
        self.process = self._log.popen(
            [sys.executable, "-m", module, "--ros-args", *ros_args],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def interrupt(self) -> None:
        """SIGINT, as Ctrl-C or launch would send it: a clean rclpy shutdown."""
        if self.alive() and not self._interrupted:
            self._interrupted = True
            self.process.send_signal(signal.SIGINT)

    def stop(self, timeout: float = 5.0) -> int:
        """SIGINT (unless interrupt() sent it), wait; SIGKILL if it does not end in time
        (said on the console: a node that hangs in its shutdown is worth knowing of)."""
        self.interrupt()
        try:
            self.process.wait(max(timeout, 0.0))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            print(f"rbd_bringup: {self.name} had not ended {timeout:.1f} s after SIGINT: "
                  "killed", flush=True)
        self._log.close()
        return self.process.returncode

    def log_tail(self, lines: int = 20) -> str:
        self._log.sync()
        return "\n".join(self.log_path.read_text().splitlines()[-lines:])

    def sync_log(self) -> None:
        """What the node has written so far, in its log file."""
        self._log.sync()


def params_file_args(files) -> list[str]:
    return [arg for path in files for arg in ("--params-file", str(path))]


def _write_params(path: Path, node: str, parameters: dict, key: str | None = None) -> Path:
    """A parameter file for `node` in any namespace (its section '/**/node': a bare 'node'
    matches only /node; or `key`)."""
    path.write_text(yaml.safe_dump({key or f"/**/{node}": {"ros__parameters": parameters}}))
    return path


class Bringup:
    """Starts the simulator and the controller as child processes; use as a context manager.

    The robot_description itself is published by `DescriptionPublisher` in the caller's
    process (it needs an rclpy context, which the caller owns).
    """

    def __init__(self, config: BringupConfig) -> None:
        self.config = config
        self._tmp: Path | None = None   # the temporary log directory, removed by stop()
        self.keep_logs = False          # True: stop() keeps even a temporary one (a failed run)
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
            self.log_dir = self._tmp = Path(tempfile.mkdtemp(prefix="rbd_bringup_"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.simulator = self.start_simulator()
        self.controller = self.start_controller()

    def start_simulator(self) -> NodeProcess:
        joints = self.config.joints()
        parameters = {
            "lockstep": self.config.lockstep,
            "engine": self.config.engine,
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
        if self.config.plant_urdf:
            parameters["plant_description"] = self.config.plant_urdf
        parameters.update(self.config.extra_simulator_parameters)
        params = _write_params(self.log_dir / "simulator.yaml", SIMULATOR_NODE, parameters)
        files = (*self.config.simulator_params_files, params)
        return NodeProcess(
            SIMULATOR_NODE, SIMULATOR_MODULE,
            [*self._namespace_args(), *params_file_args(files)],
            self.log_dir / "simulator.log",
        )

    def start_controller(self) -> NodeProcess:
        return NodeProcess(
            CONTROLLER_NODE, CONTROLLER_MODULE,
            [*self._namespace_args(), *params_file_args(self.controller_files())],
            self.log_dir / "controller.log",
        )

    def controller_files(self) -> list[Path]:
        """rbd_controller's parameter files, written into the log folder, in their order."""
        # The same YAML arm.launch.py gives rbd_controller, then the launch arguments on top.
        overrides = {"use_sim_time": True,
                     **(simulator_loop(True) if self.config.lockstep else {}),
                     **self.config.extra_controller_parameters}
        if self.config.mode:
            overrides["mode"] = self.config.mode
        params = _write_params(self.log_dir / "controller_overrides.yaml", CONTROLLER_NODE,
                               overrides)
        config_file = self.config.config_file or _write_params(
            self.log_dir / "controller_robot.yaml", CONTROLLER_NODE, self.config.robot_parameters)
        # Its section is '/**', the config's: rcl merges the files' sections by key, in the
        # order each key first appears, so a '/**/rbd_controller' section here, first, put
        # every later one (the --mode and the loop above, a user's file) before the config's
        # '/**', which then won.
        simulated = _write_params(self.log_dir / "controller_simulated.yaml", CONTROLLER_NODE,
                                  simulated_plant_parameters(self.config.lockstep), key="/**")
        return [simulated, config_file, *self.config.controller_params_files, params]

    def _namespace_args(self) -> list[str]:
        """Both nodes in the run's namespace, and its /clock there: the simulator publishes it,
        the controller's TimeSource subscribes it (both through the remap rule), so two runs
        in two namespaces keep two clocks."""
        return namespace_ros_args(self.config.namespace, clock=True)

    def check_alive(self) -> None:
        """Raise RuntimeError with the log tail of a child that has exited."""
        for child in (self.simulator, self.controller):
            if child is not None and not child.alive():
                raise RuntimeError(f"{child.name} exited with code "
                                   f"{child.process.returncode}:\n{child.log_tail()}")

    def stop(self) -> None:
        # both at once, then wait: each takes up to a second to end under load. Together they
        # get STOP_WITHIN_S, then SIGKILL: rbd_bringup ends within 2 s of Ctrl-C even when a
        # node hangs in its shutdown (once in three CI runs on 2026-11-28, Kilted's rclpy)
        children = [c for c in (self.controller, self.simulator) if c is not None]
        for child in children:
            child.interrupt()
        deadline = time.monotonic() + STOP_WITHIN_S
        for child in children:
            child.stop(deadline - time.monotonic())
        if self._tmp is not None and not self.keep_logs:
            shutil.rmtree(self._tmp, ignore_errors=True)
