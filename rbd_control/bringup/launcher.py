"""rbd_bringup: the arm.launch.py bringup (sim:=mujoco) without `ros2 launch`.

    rbd_bringup [--mode computed_torque] [--description robot.urdf|robot.urdf.xacro]
                [name:=value ...] [--config arm_controller.yaml] [--params-file more.yaml ...]
                [--profile franka_panda|ur_e_series|so101|none]
                [--plant-description real_robot.urdf]
                [--lockstep] [--sim mujoco|dart] [--demo-trajectory] [--duration 20]
                [--namespace left]
    rbd_bringup --teleop [--teleop-feedback on|contact|off] [--duration 30] [--lockstep]
                [--output DIR]

launch and launch_ros cannot be installed here, so this one command does what
arm.launch.py does with sim:=mujoco, from the same config/arm_controller.yaml:

    this process      the robot_description publisher (std_msgs/String, transient_local,
                      as robot_state_publisher) and, with --demo-trajectory, one
                      FollowJointTrajectory goal (demo_goal.py)
    child process     rbd_mujoco_sim      (python -m rbd_control.ros.simulator.node), MuJoCo or,
                                          with --sim dart, DART (the node's `engine`)
    child process     rbd_controller      (python -m rbd_control.ros.controller.node)

The child processes (and why they are processes) are in rbd_control/bringup/processes.py;
the light nodes (description, trajectory) stay in this process. A .xacro description is
expanded with the name:=value arguments by rbd_control/description/files.py, as `xacro`
does in a ROS launch file; the description is then parsed as the nodes will parse it
(the dynamics' load_urdf), and a refused file or argument (arguments.py) ends the command
with one line naming it, exit status 2, before any node starts.

A robot profile (--profile NAME, profiles.py): config/profiles/<name>.yaml goes to the
controller after the config and before every --params-file, and to the simulator before its
own parameters; its values are checked against both nodes' tables before any node starts.
Each --params-file goes to both nodes, each reading its own section (rbd_mujoco_sim's
obstacle or hand beside rbd_controller's settings).

A namespace (--namespace NAME, namespaces.py): every node of the run, this process's too,
is started in /NAME, and its /clock is remapped to /NAME/clock, so two runs side by side (two
arms) share no topic, action, parameter or clock; a --config or --params-file whose section
names the node in the root namespace only ('rbd_controller:') is refused, naming the key to
use ('/**/rbd_controller:').

Another robot (--description) without --config: config/arm_controller.yaml names the default
arm's joints and tool, so the controller gets only the rest of it plus every moving joint of
the description (processes.robot_parameters); the simulator starts it at the middle of each
joint's range (waypoints.start_pose), and the demo trajectory stays within its limits.

With --teleop it runs two of these, a leader moved by a simulated hand and a follower that
tracks it, in the namespaces /leader and /follower, and the link between them (teleop.py).

While the nodes run it watches them (watch.py): a node that refuses the robot description
is named with its reason and ends the run. At the end one line says whether the run did what
was asked (the loop closed; the demo trajectory's goal succeeded, with its RMS tracking
error; the excitation recorded), and the exit status says so too: 0 only if it did. The
logs of a failed run are kept, and their folder printed.
"""
from __future__ import annotations

import importlib.util
import math
import sys
import time
from pathlib import Path
from typing import Sequence

from rbd_control.bringup.arguments import parse_args
from rbd_control.bringup.namespaces import unmatched_section
from rbd_control.bringup.processes import (CONTROLLER_NODE, SIMULATOR_NODE, Bringup,
                                           BringupConfig, EXCITATION_BANDWIDTH,
                                           find_config_file, robot_parameters)
from rbd_control.bringup.profiles import profile_files_for
from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints, start_pose
from rbd_control.description.files import DescriptionError, parse_mappings, read_description
from rbd_control.ros.lifetime import start_process

# rbd_control.ros.conversions is imported where it is used: it loads the dynamics kernels
# (numba compiles them on a fresh install's first start, minutes), and --help must not wait.

SPIN_S = 0.05        # the main loop's longest wait for the executor
# sim seconds the start pose is held (its drift printed) before the demo trajectory, whose
# first point, the same pose, comes 0.5 s later; as short as the old 100 commands: a longer
# wait left a 15 s run on a loaded machine without its demo
HOLD_S = 0.25
LOG_CHECK_S = 0.25   # wall seconds between two looks at the nodes' logs
REFUSAL_GRACE_S = 2.0   # after one node's refusal, how long the other's may take to say its own
# In lock step the plant waits for each command: a wall-clock gap between states is this
# machine's load, not a lost sensor, and the simulator re-sends an unanswered state after
# lockstep_kick_period (0.5 s). The default state_timeout (0.1 s) aborted the demo's goal on a
# loaded 2-core machine (2 runs of ~12); rbd_bringup --lockstep gives the controller this.
LOCKSTEP_STATE_TIMEOUT_S = 1.0


class Refused(Exception):
    """A description or argument refused before any node starts: one line, exit status 2."""


def checked_model(urdf: str, path: Path | None):
    """The dynamics' Model of `urdf`, as the nodes will parse it: Refused with the reason."""
    from rbd_control.dynamics import load_urdf
    try:
        return load_urdf(urdf)
    except (ValueError, KeyError, RecursionError) as error:   # ModelError is a ValueError
        raise Refused(f"{path or 'the default arm'}: {error}") from None


def config_from_args(args) -> tuple[BringupConfig, object]:
    """(what to start, the controlled robot's Model); Refused or DescriptionError."""
    from rbd_control.description import default_arm_urdf

    mappings = parse_mappings(args.xacro_args)
    if mappings and not args.description:
        raise DescriptionError("name:=value arguments need a .xacro --description")
    urdf = read_description(args.description, mappings) if args.description else default_arm_urdf()
    plant = read_description(args.plant_description, mappings) if args.plant_description else None
    model = checked_model(urdf, args.description)
    if plant is not None:
        checked_model(plant, args.plant_description)
    # the default arm's config names its joints and tool: another robot without a config of
    # its own gets the rest of it, and every moving joint of its description
    own_config = args.config or not args.description
    config_file = args.config or find_config_file()
    if args.namespace:   # a file whose section names the node in the root namespace only
        for path in (args.config, *args.params_file):
            reason = path and unmatched_section(path, args.namespace, CONTROLLER_NODE)
            if reason:
                raise Refused(f"--namespace {args.namespace}: {reason}")
    return BringupConfig(
        urdf=urdf,
        config_file=config_file if own_config else None,
        robot_parameters={} if own_config else robot_parameters(config_file, model.joint_names),
        mode=args.mode or ("feedforward_pd" if args.excite else None),
        lockstep=args.lockstep,
        engine=args.sim,
        initial_positions=start_pose(model) if args.description else dict(DEFAULT_ARM_HOME),
        joint_damping=not args.no_joint_damping,
        # the profile before the user's files: theirs win
        controller_params_files=[*profile_files_for(args.profile, CONTROLLER_NODE),
                                 *args.params_file] if args.profile else list(args.params_file),
        # the simulator reads its own sections of the same files (rbd_mujoco_sim's obstacle,
        # hand, plant options beside rbd_controller's)
        simulator_params_files=[*(profile_files_for(args.profile, SIMULATOR_NODE)
                                  if args.profile else []), *args.params_file],
        plant_urdf=plant,
        log_dir=args.log_dir,
        namespace=args.namespace,
        extra_controller_parameters={
            **({"state_timeout": LOCKSTEP_STATE_TIMEOUT_S} if args.lockstep else {}),
            **(EXCITATION_BANDWIDTH if args.excite else {})},
    ), model


def main(argv: Sequence[str] | None = None) -> int:
    start_process()   # a signal before ROS is up, the parent's death (ros/lifetime.py)
    args = parse_args(argv)
    if args.teleop:
        return _teleop(args)
    if args.sim == "dart" and importlib.util.find_spec("dartpy") is None:
        print("rbd_bringup: error: --sim dart needs dartpy: pip install rbd_control[dart]",
              file=sys.stderr)
        return 2
    try:
        config, model = config_from_args(args)
        excitation_msg = None
        if args.excite:
            from rbd_control.bringup.excite import excitation_plan
            excitation_msg = excitation_plan(config.urdf, args.excite, config.joints())
    except (DescriptionError, FileNotFoundError, Refused, ValueError) as error:
        # FileNotFoundError: a share file not found; ValueError: the InputError of an
        # excitation this robot cannot run
        print(f"rbd_bringup: error: {error}", file=sys.stderr)
        return 2
    from rbd_control.ros.run import exit_if_signalled, ros_session

    # args=[]: rclpy would read the xacro arguments in sys.argv as (deprecated) remappings
    # in the run's namespace: the description, the watched topics and the demo's action with it
    with ros_session("rbd_bringup", args=[], namespace=config.namespace) as (node, executor):
        run = _Run(args, config, model, node, excitation_msg)
        with Bringup(config) as bringup:
            where = f"namespace {config.namespace}; " if config.namespace else ""
            print(f"rbd_bringup: {where}logs in {bringup.log_dir}; Ctrl-C to stop", flush=True)
            status = run.loop(executor, bringup)
            bringup.keep_logs = status != 0
            if status != 0:
                print(f"rbd_bringup: logs kept in {bringup.log_dir}", flush=True)
    return exit_if_signalled(status)


def _teleop(args) -> int:
    """rbd_bringup --teleop: two runs, a leader and a follower (bringup/teleop.py)."""
    if importlib.util.find_spec("matplotlib") is None:
        print("rbd_bringup: error: --teleop draws its plots with matplotlib: pip install "
              "rbd_control[demo]", file=sys.stderr)
        return 2
    from rbd_control.bringup.teleop import run
    return run(args)


class _Run:
    """One run of rbd_bringup's loop: spin, watch, send what was asked, judge."""

    def __init__(self, args, config, model, node, excitation_msg) -> None:
        from rbd_control.bringup.demo_goal import DemoGoal, action_available
        from rbd_control.ros.description_publisher import make_description_publisher
        from rbd_control.ros.drained import DrainedSubscriptions
        from rbd_control.bringup.watch import LoopWatcher

        self.args, self.config, self.model, self.node = args, config, model, node
        make_description_publisher(node, config.urdf)
        self.drained = DrainedSubscriptions(node)
        self.watcher = LoopWatcher(self.drained)
        self.joints = config.joints() or list(model.joint_names)
        self.goal = None          # the demo's DemoGoal once planned
        self.demo_done = not args.demo_trajectory
        self._goal_type = DemoGoal if action_available() else None
        self.excitation = None
        if excitation_msg is not None:
            from rbd_control.bringup.excite import Excitation
            self.excitation = Excitation(node, self.drained, excitation_msg, args.record)
        self.failure: str | None = None
        # Ctrl-C or SIGTERM ended the run: what was unfinished is not a failure (the user
        # stopped it), what failed before still is
        self.signalled = False
        self.timed_out = False    # --duration ended it: likewise, but a loop that never
        # closed in all that time is a dead run
        self._refused: dict[str, str] = {}
        self._refusal_deadline = math.inf

    def loop(self, executor, bringup) -> int:
        from rclpy.executors import ExternalShutdownException

        from rbd_control.bringup.watch import LogWatch
        logs = [LogWatch(child) for child in (bringup.simulator, bringup.controller)]
        started = next_look = time.monotonic()
        try:
            while self.args.duration is None or time.monotonic() - started < self.args.duration:
                executor.spin_once(timeout_sec=SPIN_S)
                if not self.node.context.ok():   # Ctrl-C or SIGTERM (run.ros_session)
                    self.signalled = True
                    break
                self.drained.drain()
                bringup.check_alive()
                if time.monotonic() >= next_look:
                    next_look = time.monotonic() + LOG_CHECK_S
                    if self._refusals(logs):
                        break
                if self._step():
                    break
                self.watcher.report()
            else:
                self.timed_out = True
        except (KeyboardInterrupt, ExternalShutdownException):
            self.signalled = True
        except RuntimeError as error:
            # rclpy's RCLError ("context is not valid") when a signal shut it down mid-wait
            if self.node.context.ok():
                self.failure = str(error)
            else:
                self.signalled = True
        return self._verdict(time.monotonic() - started)

    def _refusals(self, logs) -> bool:
        """True when the run must end: a node refused its description (and the others have
        had REFUSAL_GRACE_S to say theirs)."""
        for log in logs:
            reason = log.refusal()
            if reason is not None and log.child.name not in self._refused:
                self._refused[log.child.name] = reason
                print(f"rbd_bringup: {log.child.name} refused the robot description: {reason}",
                      flush=True)
                self._refusal_deadline = min(self._refusal_deadline,
                                             time.monotonic() + REFUSAL_GRACE_S)
        return len(self._refused) == len(logs) or time.monotonic() >= self._refusal_deadline

    def _step(self) -> bool:
        """Send the demo trajectory or drive the excitation; True when the run must end."""
        watcher = self.watcher
        if not self.demo_done and self.goal is None and watcher.held_for() >= HOLD_S:
            home = dict(zip(watcher.last_state.name, watcher.last_state.position))
            drift = watcher.drift(self.joints)
            print(f"rbd_bringup: held the start pose {watcher.held_for():.1f} s: largest drift "
                  f"{1e3 * drift:.2f} mrad", flush=True)
            waypoints = demo_waypoints(home, self.joints, self.model)
            if self._goal_type is None:
                from rbd_control.bringup.demo_goal import topic_fallback
                topic_fallback(self.node, self.joints, waypoints)
                self.demo_done = True
            else:
                self.goal = self._goal_type(self.node, self.joints, waypoints)
        if self.goal is not None and not self.goal.sent:
            self.goal.send()   # again on the next spin until the action server is there
        if self.goal is not None and self.goal.finished:
            self.demo_done = True
            # a failed demo ends the run at once; a run with --duration ends when it is over
            return not self.goal.succeeded or self.args.duration is not None
        if self.excitation is not None and watcher.commands > 100:
            if self.excitation.started is None:
                self.excitation.start()
            elif self.excitation.poll():
                return True
        return False

    def _verdict(self, elapsed: float) -> int:
        """The final line, and the exit status: 0 only if the run did what was asked."""
        watcher, failures, done = self.watcher, [], []
        unfinished = done if self.signalled or self.timed_out else failures
        if self.failure:
            failures.append(self.failure)
        failures += [f"{name} refused the robot description" for name in self._refused]
        loop = (f"{elapsed:.1f} s, {watcher.states} joint states, "
                f"{watcher.commands} effort commands")
        if watcher.commands == 0:
            (done if self.signalled else failures).append(
                f"no effort command in {loop.split(',')[0]}: the loop never closed")
        else:
            done.append(f"the loop ran ({loop})")
        if self.goal is not None:
            (done if self.goal.succeeded else
             failures if self.goal.finished else unfinished).append(self.goal.summary)
        elif self.args.demo_trajectory and not self.demo_done:
            unfinished.append("the demo trajectory was never sent")
        if self.excitation is not None:
            if self.excitation.recorded is None:
                unfinished.append("the excitation had not ended when the run stopped")
            else:   # recorded: did the arm follow it?
                (done if self.excitation.followed else failures).append(self.excitation.summary)
        if failures:
            print(f"rbd_bringup: FAILED: {'; '.join(failures)}", flush=True)
            return 1
        stopped = ("stopped by a signal: " if self.signalled else
                   "stopped by --duration: " if self.timed_out else "")
        print(f"rbd_bringup: done: {stopped}{'; '.join(done)}", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
