"""rbd_mujoco_sim: the simulator as a ROS 2 node, a thin adapter over a plant: MuJoCo's
Simulator, or DART's DartSimulator with `engine: dart` (sim/plant.py's EffortPlant).

It offers the topics a controller sees under Gazebo + gz_ros2_control with
joint_state_broadcaster and a JointGroupEffortController named effort_controller. Every name
is relative (or private) but /clock: `--ros-args -r __ns:=/left` moves them all, and
rbd_bringup --namespace remaps /clock too (bringup/namespaces.py):

    in   effort_controller/commands    std_msgs/Float64MultiArray, order = `joints`
    in   robot_description             std_msgs/String, transient_local (if the parameter is
                                       empty; neither when plant_description is set: a robot
                                       not its URDF)
    in   ~/joint_disturbance           sensor_msgs/JointState: name + effort = external joint
                                       torques added to the commands (tests: a blocked arm);
                                       an empty message removes them
    in   ~/external_wrench             geometry_msgs/WrenchStamped: push the link in frame_id
                                       (world axes, at its origin; external_wrench.py)
    in   ~/hand_target                 geometry_msgs/PoseStamped: where a simulated hand holds
                                       hand.link (world; hand.py, MuJoCo only)
    out  joint_states                  sensor_msgs/JointState: position, velocity, effort
    out  /clock                        rosgraph_msgs/Clock (sim time), when publish_clock
    out  ~/command_latency             std_msgs/Float64, seconds from a state to the next
                                       command (lockstep only, when publish_latency; lockstep.py)
    out  ~/contact_torque, ~/contact_force   obstacle.box's contact, truth (contact_truth.py)

Two pacing modes:
  real time  a wall timer steps the physics so sim time follows wall time × real_time_factor;
             one joint state per timer tick, at most MAX_STEPS_PER_STATE steps apart: a
             starved simulator runs slower than real time instead of skipping ahead.
  lockstep   exactly one physics step per command received, then one joint state: the run
             depends only on the commands, not on scheduling (tests, benchmarks). If no
             command comes for `lockstep_kick_period` wall seconds, the current state is
             published again so a late-starting or restarted controller can join; the
             duplicate answers such a state may get are dropped (lockstep.py, which says
             what lockstep assumes: one command per state, nothing else commanding).

With wait_for_first_command (default), real time also starts only when the first effort
command arrives: until then the arm is frozen at its initial pose and its state is
re-published every `lockstep_kick_period`, so the arm does not collapse while the
controller is still starting (Gazebo would let it fall).
"""
from __future__ import annotations

import functools
import sys
import threading
import time

import mujoco
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from rbd_control.control.throttle import LOG_PERIOD_S, ThrottledWarnings
from rbd_control.params.simulator import SIM_PARAMETERS
from rbd_control.ros.conversions import time_msg
from rbd_control.ros.parameter_binding import ConfigurationError, declare, value
from rbd_control.ros.qos import ROBOT_DESCRIPTION_QOS
from rbd_control.ros.run import spin_node
from rbd_control.ros.simulator.contact_truth import ContactTruthTopics
from rbd_control.ros.simulator.external_wrench import ExternalWrenchTopic
from rbd_control.ros.simulator.hand import HandTarget
from rbd_control.ros.simulator.lockstep import Lockstep
from rbd_control.ros.simulator.pacing import Pacer
from rbd_control.ros.state_loop import StateLoop
from rbd_control.sim.mujoco_model import Obstacle
from rbd_control.sim.plant import Payload
from rbd_control.sim.simulator import Simulator

# Real-time mode never runs more than this many physics steps between two joint states.
# When this process is starved (a busy CPU, a debugger), sim time slips instead: the steps
# the timer missed are not made up in one batch, because a batch runs open loop on one
# command. The controller would see a state tens of milliseconds after the one it answered,
# and the default 8 Hz gains of the 6-DoF arm lose stability past ~6 ms of loop delay
# (bench/delay_margin.py). Gazebo and MuJoCo's `simulate` likewise run slower than real time
# rather than skip ahead when they cannot keep up.
MAX_STEPS_PER_STATE = 2
DESCRIPTION = "robot_description"   # relative: the robot_state_publisher of its namespace


def _locked(method):
    """Run `method` under the node's lock: the simulator is used by the stepping thread (the
    pacer or the command loop) and by the executor's callbacks."""
    @functools.wraps(method)
    def under_lock(self, *args):
        with self._lock:
            return method(self, *args)
    return under_lock


class SimulatorNode(Node):
    """rbd_mujoco_sim: a plant of either engine (MuJoCo or DART) behind the topics above."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("rbd_mujoco_sim", **node_kwargs)
        self._declare_parameters()
        p = self._parameter
        self._running = p("lockstep") or not p("wait_for_first_command")
        self.slipped_steps = 0  # real time: physics steps skipped because this node lagged
        self._warnings = {level: ThrottledWarnings(LOG_PERIOD_S)   # see _warn
                          for level in ("warning", "info")}
        self._plant = _plant_class(p("engine"))
        self._sim: Simulator | None = None
        self._state_sent_at: float | None = None  # wall time of the last joint state
        self._lock = threading.RLock()   # around the simulator, see pacing.py
        self._state_pub = self.create_publisher(JointState, p("state_topic"), 10)
        self._clock_pub = (self.create_publisher(Clock, "/clock", 10) if p("publish_clock")
                           else None)
        self._lockstep = None   # real time: the Pacer below steps
        if p("lockstep"):
            self._lockstep = Lockstep(
                self, self._lock, resync_window=p("lockstep_resync_window"),
                publish_latency=p("publish_latency"), simulator=lambda: self._sim,
                apply=self._apply, publish_state=self._publish_state,
                last_state_sent=lambda: self._state_sent_at)
        # commands on a thread of their own (run.spin_node starts a node's `state_loop`):
        # lockstep steps there, and the executor stays free for requests (pacing.py)
        self.state_loop = StateLoop(
            lambda group: self.create_subscription(
                Float64MultiArray, p("command_topic"), self._on_command, 10, callback_group=group),
            Float64MultiArray, self._on_command, self.context, self._loop_failed)
        self.create_subscription(JointState, "~/joint_disturbance", self._on_disturbance, 10)
        ExternalWrenchTopic(self, lambda: self._sim, self._lock)
        HandTarget(self, lambda: self._sim, p, self._lock)
        self._truth = ContactTruthTopics(self) if p("obstacle.box") else None
        self._load_initial_description()
        self._wall_start, self._sim_start = time.monotonic(), 0.0
        self.create_timer(p("lockstep_kick_period"), self._kick)
        self._pacer = None
        if self._lockstep is None:
            self._pacer = Pacer(p("timestep") / p("real_time_factor"), self._tick_real_time,
                                self._loop_failed, self.context.ok)
            self._pacer.start()

    def destroy_node(self):
        if self._pacer is not None:
            self._pacer.stop()
        self.state_loop.stop()
        return super().destroy_node()

    def _loop_failed(self, error: Exception) -> None:
        self._warn("loop_failed", f"stepping failed: {type(error).__name__}: {error}")

    # --- parameters -----------------------------------------------------------

    def _declare_parameters(self) -> None:
        declare(self, SIM_PARAMETERS)   # ConfigurationError for a bad start-up value

    def _parameter(self, name):
        current = value(self, name)
        if name in ("joints", "initial_positions", "payload.com", "payload.inertia",
                    "obstacle.box"):  # unset: empty
            return list(current or [])
        return current

    # --- robot description ----------------------------------------------------

    def _load_initial_description(self) -> None:
        plant = self._parameter("plant_description")
        if plant:   # a robot that is not its description: the topic is not followed
            self._replace_model(plant, source="plant_description")
            return
        urdf = self._parameter("robot_description")
        if urdf:
            self._replace_model(urdf, source="parameter")
        else:
            self.get_logger().info(f"waiting for {self.resolve_topic_name(DESCRIPTION)}")
        # The topic is watched either way, so a robot_state_publisher that publishes a
        # new description later (a different robot) is honoured, like controller_manager.
        self.create_subscription(String, DESCRIPTION, self._on_description,
                                 ROBOT_DESCRIPTION_QOS)

    @_locked
    def _on_description(self, msg: String) -> None:
        if self._sim is not None and msg.data == self._urdf:
            return
        self._replace_model(msg.data, source="topic")

    def _replace_model(self, urdf: str, *, source: str) -> None:
        joints = self._parameter("joints") or None
        try:
            sim = self._plant(
                urdf,
                commanded_joints=joints,
                timestep=self._parameter("timestep"),
                joint_damping=self._parameter("joint_damping"),
                clamp_effort=self._parameter("clamp_effort"),
                payloads=self._payloads(),
                stiff_friction=self._parameter("stiff_friction"),
                obstacles=self._obstacles(),
                compensates_gravity=self._parameter("plant_compensates_gravity"),
            )
            sim.reset(self._initial_pose(sim))
        except (ValueError, KeyError, RecursionError) as exc:  # ModelError is a ValueError
            self.get_logger().error(
                f"robot_description from {source} refused, keeping the last model: {exc}")
            return
        for adjustment in sim.model_adjustments:   # what MuJoCo needed changed, once per model
            self.get_logger().warning(f"plant differs from the URDF: {adjustment}")
        first_model = self._sim is None
        if not first_model:
            sim.set_time(self._sim.time)  # /clock must never run backwards
            self._sim_start, self._wall_start = sim.time, time.monotonic()
        self._sim, self._urdf = sim, urdf
        self._blow_ups_reported = 0
        self.get_logger().info(
            f"model from {source} in {self._parameter('engine')}: {len(sim.joint_names)} joints, "
            "commands for "
            f"{list(sim.commanded_joints)}, {'lockstep' if self._lockstep else 'real time'}"
        )
        if first_model:
            self._publish_state()
        # Otherwise the loop is running: in lockstep the answer in flight steps the new
        # model, and an extra state now would put a second state/command pair in flight
        # for good (every later step would then use a command one state old).

    def _payloads(self) -> list[Payload]:
        link = self._parameter("payload.link")
        if not link:
            return []
        com, inertia = self._parameter("payload.com"), self._parameter("payload.inertia")
        return [Payload(link, self._parameter("payload.mass"), com or (0.0, 0.0, 0.0),
                        inertia or Payload.inertia)]

    def _obstacles(self) -> list[Obstacle]:
        box = self._parameter("obstacle.box")
        if not box:
            return []
        return [Obstacle(box[:3], box[3:], self._parameter("obstacle.probe_link"),
                         self._parameter("obstacle.probe_radius"))]

    def _initial_pose(self, sim: Simulator) -> dict[str, float]:
        values = self._parameter("initial_positions")
        if not values:
            return {}
        names = sim.commanded_joints
        if len(values) != len(names):
            raise ValueError(
                f"initial_positions has {len(values)} values for {len(names)} joints {list(names)}"
            )
        return dict(zip(names, map(float, values)))

    # --- commands and pacing --------------------------------------------------

    @_locked
    def _on_command(self, msg: Float64MultiArray, info=None) -> None:
        if self._sim is None:
            return
        if self._lockstep is not None:
            self._lockstep.on_command(msg)
            return
        self._apply(msg)
        if not self._running:  # the first command starts the clock
            self._running = True
            self._sim_start, self._wall_start = self._sim.time, time.monotonic()

    def _apply(self, msg: Float64MultiArray) -> None:
        if not self._sim.set_command(msg.data):
            self._warn(
                "command_refused",
                f"effort command refused (need {len(self._sim.commanded_joints)} finite values, "
                f"got {len(msg.data)}); keeping the previous one",
            )

    @_locked
    def _on_disturbance(self, msg: JointState) -> None:
        if self._sim is None:
            return
        try:
            if len(msg.name) != len(msg.effort):
                raise ValueError(f"{len(msg.name)} names but {len(msg.effort)} efforts")
            self._sim.set_disturbance(dict(zip(msg.name, msg.effort)))
        except (KeyError, ValueError) as exc:
            self.get_logger().warn(f"joint disturbance refused: {exc}")
            return
        # a stream (teleoperation's force feedback, 50 Hz): the first at once, then one line
        # per period with a count
        self._warn("disturbance", f"joint disturbance: {dict(zip(msg.name, msg.effort))}",
                   level="info")

    @_locked
    def _kick(self) -> None:
        """Re-publish a state nobody answered (lockstep) or a frozen one (before the start)."""
        lockstep = self._lockstep
        if self._sim is None:
            return
        if lockstep.absorbing if lockstep is not None else self._running:
            return   # lockstep: while duplicate answers are dropped; real time: once started
        # most of a period: against the kick one timer period ago, ">" failed on jitter
        # every other time (a kick every 2 periods, a start-up ~1 s longer)
        if time.monotonic() - self._last_sent() > 0.9 * self._parameter("lockstep_kick_period"):
            if lockstep is not None:
                lockstep.expect_duplicates()
            self._publish_state()

    @_locked
    def _tick_real_time(self) -> None:
        if self._sim is None or not self._running:
            return
        target = self._sim_start + (time.monotonic() - self._wall_start) * self._parameter(
            "real_time_factor"
        )
        due = int((target - self._sim.time) / self._sim.timestep + 1e-9)
        if due <= 0:
            return
        if due > MAX_STEPS_PER_STATE:
            # Fell behind: let sim time slip by the rest (see MAX_STEPS_PER_STATE).
            self.slipped_steps += due - MAX_STEPS_PER_STATE
            due = MAX_STEPS_PER_STATE
            self._sim_start = self._sim.time + due * self._sim.timestep
            self._wall_start = time.monotonic()
            self._warn(
                "behind_real_time",
                f"simulator behind real time; sim time slipped {self.slipped_steps} steps so far",
            )
        self._sim.step(due)
        self._publish_state()

    def _warn(self, key: str, text: str, level: str = "warning") -> None:
        """A line that may repeat on every command or tick (a warning, or with level 'info' a
        note): the first at once, repeats as one line per period with a count. Not rclpy's
        throttle_duration_sec, which costs 0.2-0.35 ms per call (control/throttle.py), most
        of a timestep, when the node is already behind."""
        throttle = self._warnings[level]
        throttle.warn(key, text)
        for line in throttle.due(time.monotonic()):
            # one call site per severity: rclpy refuses a second severity from the same line
            if level == "info":
                self.get_logger().info(line)
            else:
                self.get_logger().warning(line)

    def _last_sent(self) -> float:
        return self._state_sent_at or 0.0

    # --- output ---------------------------------------------------------------

    def _publish_state(self) -> None:
        if self._sim.blow_ups > self._blow_ups_reported:
            self._blow_ups_reported = self._sim.blow_ups
            self.get_logger().error(
                "physics diverged (NaN or huge position, velocity or acceleration) at sim t = "
                f"{self._sim.time:.3f} s; the plant reset the arm to the zero pose. Usually: "
                "gains too high for this timestep."
            )
        state = self._sim.state()
        stamp = time_msg(state.time)
        if self._clock_pub is not None:
            self._clock_pub.publish(Clock(clock=stamp))
        msg = JointState()
        msg.header.stamp = stamp
        msg.name = list(state.names)
        msg.position = state.position.tolist()
        msg.velocity = state.velocity.tolist()
        msg.effort = state.effort.tolist()
        self._state_sent_at = time.monotonic()
        self._state_pub.publish(msg)
        if self._truth is not None:
            self._truth.publish(self._sim, stamp, state.names)


def _plant_class(engine: str):
    """The plant class of `engine`; ConfigurationError (one line) when dartpy is missing."""
    if engine != "dart":
        return Simulator
    try:
        from rbd_control.sim.dart_plant import DartSimulator
    except ImportError as error:
        if error.name != "dartpy":
            raise
        raise ConfigurationError("engine 'dart' needs dartpy, which is not installed: "
                                 "pip install rbd_control[dart]") from None
    return DartSimulator


def _route_mujoco_warnings(node: SimulatorNode) -> None:
    # MuJoCo would otherwise append its warnings to MUJOCO_LOG.TXT in the working directory.
    mujoco.set_mju_user_warning(lambda text: node.get_logger().warning(f"MuJoCo: {text}"))


def main(argv: list[str] | None = None) -> int:
    return spin_node("rbd_mujoco_sim", SimulatorNode, argv if argv is not None else sys.argv,
                     on_created=_route_mujoco_warnings)


if __name__ == "__main__":
    sys.exit(main())
