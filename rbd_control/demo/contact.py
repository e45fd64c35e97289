"""The demo's contact phase: the arm runs into a box and the controller's momentum observer
(Haddadin, De Luca, Albu-Schaeffer, "Robot Collisions: A Survey on Detection, Isolation, and
Identification", IEEE T-RO 33(6), 2017) stops it.

The main bringup's simulator has rbd_mujoco_sim's obstacle: a box (obstacle.box) beside the
Cartesian phase's work pose, which a 3 cm sphere on tool0 (obstacle.probe_link) hits when the
shoulder pans by about HIT_PAN from there; no other phase comes near it (BOX_CLEARANCE). The
controller runs with contact.enabled from the start, reporting only (contact.reaction none:
the Cartesian push is an external force too); this phase switches to computed_torque and
contact.reaction hold, clears what the push latched (~/reset_collision) and sends a
trajectory that accelerates the pan joint to SPEED in ACCEL_S and then pans on at constant
velocity, through the box. Recorded: ~/external_torque (r, the observer's estimate of
tau_ext), the simulator's ~/contact_torque and ~/contact_force (MuJoCo's qfrc_constraint and
contact normal force, the truth), /joint_states (velocities), ~/contact_state (detected_at).

Reported: the detection delay after the true |tau_ext| passed the collision level in force
(the constant-velocity one, contact.torque_thresholds[3], between ACCEL_S and ACCEL_S + PAN_S
after the trajectory was sent; the accelerating one, [1], outside),
the time from detection until every joint is below STOPPED_SPEED (and the largest speed after
that: the wrist the impact spun settles back to the held pose), the peak contact force.
Passes when the collision is detected and the arm stops within MAX_STOP_S of the detection.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbd_control.bringup.processes import CONTROLLER_NODE, SIMULATOR_NODE
from rbd_control.bringup.waypoints import WORK_JOINTS
from rbd_control.demo.cartesian import EE_LINK
from rbd_control.params.controller import CONTROLLER_PARAMETERS

PHASE = "contact"
PROBE_RADIUS = 0.03                    # m, the sphere on tool0
BOX_HALF = 0.05                        # m, half the box's edge
BOX_OFFSET = 0.07                      # m from tool0 at HIT_PAN to the box centre, along motion
HIT_PAN = 0.35                         # rad of shoulder_pan from the work pose at the box
SPEED = 0.8                            # rad/s of shoulder_pan at constant velocity
ACCEL_S = 0.5                          # s from rest to SPEED
PAN_S = 1.5                            # s at constant velocity after that (the box is hit first)
AFTER_S = 0.8                          # sim s recorded after the detection
STOPPED_SPEED = 0.01                   # rad/s, every joint
MAX_STOP_S = 0.200                     # s from detection to stopped: the phase's limit
BOX_CLEARANCE = 0.05                   # m the probe keeps from the box in the other phases
SKIPPED_DART = ("skipped: the obstacle is simulated by the MuJoCo plant only "
                "(rbd_mujoco_sim's obstacle.box; --sim dart has no contact)")


def levels():
    """contact.torque_thresholds: [contact, collision] accelerating, then at constant velocity."""
    return [float(x) for x in CONTROLLER_PARAMETERS.default("contact.torque_thresholds")]


def work_q(model) -> np.ndarray:
    return np.array([WORK_JOINTS[j] for j in model.joint_names])


def obstacle_box(model) -> list[float]:
    """[x, y, z, half_x, half_y, half_z]: a cube BOX_OFFSET beyond tool0 at the work pose panned
    by HIT_PAN, along tool0's velocity there."""
    from rbd_control.dynamics import frame_jacobian, frame_pose

    q = work_q(model)
    q[model.joint_names.index("shoulder_pan")] += HIT_PAN
    direction = frame_jacobian(model, q, EE_LINK)[3:, model.joint_names.index("shoulder_pan")]
    centre = frame_pose(model, q, EE_LINK)[:3, 3] + BOX_OFFSET * direction / np.linalg.norm(
        direction)
    return [*map(float, centre), BOX_HALF, BOX_HALF, BOX_HALF]


def trajectory_points(joints, q0):
    """(time_from_start, q, qd, qdd) from rest at q0: shoulder_pan to SPEED in ACCEL_S, on at
    constant velocity (zero desired acceleration: the constant-velocity levels) for PAN_S, to
    rest in ACCEL_S (a trajectory ends at rest)."""
    pan = list(joints).index("shoulder_pan")
    q1, q2, q3 = (np.array(q0, dtype=float) for _ in range(3))
    q1[pan] += 0.5 * SPEED * ACCEL_S
    q2[pan] = q1[pan] + SPEED * PAN_S
    q3[pan] = q2[pan] + 0.5 * SPEED * ACCEL_S
    velocity, rest = np.zeros_like(q1), np.zeros_like(q1)
    velocity[pan] = SPEED
    return [(ACCEL_S, q1, velocity, rest), (ACCEL_S + PAN_S, q2, velocity, rest),
            (2 * ACCEL_S + PAN_S, q3, rest, rest)]


def simulator_parameters(model) -> dict:
    return {"obstacle.box": obstacle_box(model), "obstacle.probe_link": EE_LINK,
            "obstacle.probe_radius": PROBE_RADIUS}


CONTROLLER_PARAMETERS_ON = {"contact.enabled": True, "contact.reaction": "none",
                            "contact.wrench_link": EE_LINK}


@dataclass
class ContactResult:
    time: np.ndarray          # s since the trajectory was sent
    estimated: np.ndarray     # (samples, joints) ~/external_torque, N m
    true: np.ndarray          # (samples, joints) ~/contact_torque, N m
    level: float              # the collision level in force when the truth passed it, N m
    true_over: float | None   # s: the true |tau_ext| first above level
    detected: float | None    # s: ~/contact_state's detected_at
    # s: the first instant after the detection with every joint below STOPPED_SPEED (as
    # test/control/test_contact.py measures)
    stopped: float | None
    peak_force: float         # N
    reason: str               # the collision's reason (~/contact_state's message)
    velocity_time: np.ndarray = None   # s, /joint_states stamps
    velocity: np.ndarray = None        # (samples, joints) rad/s
    creep: float | None = None         # rad/s, the largest joint speed after `stopped`

    @property
    def delay(self):
        return None if None in (self.detected, self.true_over) else self.detected - self.true_over

    @property
    def stop_time(self):
        return None if None in (self.detected, self.stopped) else self.stopped - self.detected


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


class ContactPhase:
    """Run on the main bringup (its simulator started with simulator_parameters, its
    controller with CONTROLLER_PARAMETERS_ON), after the Cartesian phase."""

    def __init__(self, demo) -> None:
        self.demo = demo

    def _subscribe(self):
        from diagnostic_msgs.msg import DiagnosticStatus
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64

        from rbd_control.ros.controller.contact import STATE_QOS

        node, joints = self.demo.node, self.demo.joints
        self.estimated, self.true, self.velocity = {}, {}, {}
        self.forces, self.status, self.position = [], [], None

        def by_name(store):
            def on(msg):
                index = [list(msg.name).index(j) for j in joints]
                store[_stamp(msg)] = np.asarray(msg.effort)[index]
            return on

        def on_state(msg):
            index = [list(msg.name).index(j) for j in joints]
            self.velocity[_stamp(msg)] = np.asarray(msg.velocity)[index]
            self.position = np.asarray(msg.position)[index]

        depth = 5000
        self._subscriptions = [
            node.create_subscription(JointState, f"/{CONTROLLER_NODE}/external_torque",
                                     by_name(self.estimated), depth),
            node.create_subscription(JointState, f"/{SIMULATOR_NODE}/contact_torque",
                                     by_name(self.true), depth),
            node.create_subscription(Float64, f"/{SIMULATOR_NODE}/contact_force",
                                     lambda msg: self.forces.append(msg.data), depth),
            node.create_subscription(JointState, "/joint_states", on_state, depth),
            node.create_subscription(DiagnosticStatus, f"/{CONTROLLER_NODE}/contact_state",
                                     self.status.append, STATE_QOS)]

    def _close(self):
        for subscription in self._subscriptions:
            self.demo.node.destroy_subscription(subscription)

    def _reset_collision(self):
        from std_srvs.srv import Trigger

        demo = self.demo
        client = demo.node.create_client(Trigger, f"/{CONTROLLER_NODE}/reset_collision")
        demo.spin_until(client.service_is_ready, 10.0, "~/reset_collision", PHASE, 0)
        future = client.call_async(Trigger.Request())
        demo.spin_until(future.done, 10.0, "~/reset_collision's reply", PHASE, 0)
        demo.node.destroy_client(client)
        if not future.result().success:
            raise RuntimeError(f"{PHASE}: ~/reset_collision refused: {future.result().message}")

    def _detected_at(self):
        if not self.status:
            return None
        value = {kv.key: kv.value for kv in self.status[-1].values}.get("detected_at", "")
        return float(value) if value else None

    def run(self) -> ContactResult:
        from rbd_control.ros.conversions import joint_trajectory_msg

        demo = self.demo
        self._subscribe()
        try:
            demo.set_parameters({"mode": "computed_torque", "contact.reaction": "hold"}, PHASE)
            self._reset_collision()
            # until the controller fills ~/external_torque (it looks for subscribers every
            # 0.2 s of wall time) and the truth and the states come
            demo.spin_until(lambda: self.estimated and self.true and self.position is not None,
                            20.0, "~/external_torque, ~/contact_torque, /joint_states", PHASE, 0)
            start = demo.recorder.sim_time
            demo.send(joint_trajectory_msg(demo.joints,
                                           trajectory_points(demo.joints, self.position)))
            end = start + 2 * ACCEL_S + PAN_S
            while demo.recorder.sim_time < end and self._detected_at() is None:
                demo.wait_for_sim_time(min(end, demo.recorder.sim_time + 0.05), PHASE)
            detected = self._detected_at()
            demo.wait_for_sim_time(demo.recorder.sim_time + AFTER_S, PHASE)
        finally:
            self._close()
        demo.windows[PHASE] = (start, demo.recorder.sim_time)
        return self._result(start, detected)

    def _result(self, start, detected) -> ContactResult:
        stamps = [s for s in sorted(set(self.estimated) & set(self.true)) if s >= start]
        moving = sorted(s for s in self.velocity if s >= start)
        return analyse(np.array(stamps) - start, np.array([self.estimated[s] for s in stamps]),
                       np.array([self.true[s] for s in stamps]), np.array(moving) - start,
                       np.array([self.velocity[s] for s in moving]),
                       None if detected is None else detected - start,
                       max(self.forces, default=0.0),
                       self.status[-1].message if self.status else "")


def analyse(t, estimated, true, t_velocity, velocity, detected, peak_force, reason):
    """The phase's figures from its samples, times in s since the trajectory was sent: the
    collision level in force (accelerating outside the constant-velocity stretch), when the
    truth first passed it, and when every joint first went below STOPPED_SPEED after the
    detection (the largest speed after that is `creep`: a light wrist the impact spun settling
    back to the held pose)."""
    accelerating_level, nominal_level = levels()[1], levels()[3]
    level = np.where((t < ACCEL_S) | (t > ACCEL_S + PAN_S), accelerating_level, nominal_level)
    over = np.flatnonzero(np.max(np.abs(true), axis=1) > level) if len(t) else []
    stopped, creep = None, None
    if detected is not None:
        after = t_velocity >= detected
        still = after & (np.max(np.abs(velocity), axis=1) < STOPPED_SPEED)
        if still.any():
            first = np.flatnonzero(still)[0]
            stopped = float(t_velocity[first])
            creep = float(np.max(np.abs(velocity[first:])))
    return ContactResult(
        t, estimated, true, float(level[over[0]]) if len(over) else nominal_level,
        float(t[over[0]]) if len(over) else None, detected, stopped, float(peak_force), reason,
        t_velocity, velocity, creep)


def save(path: Path, result: ContactResult, joints) -> Path:
    """The phase's samples (numpy .npz): time, estimated and true torques, velocities."""
    np.savez_compressed(path, joints=np.array(joints), time=result.time,
                        estimated=result.estimated, true=result.true,
                        velocity_time=result.velocity_time, velocity=result.velocity,
                        detected=np.nan if result.detected is None else result.detected)
    return path


def simulate(urdf: str, model, loop) -> ContactResult:
    """The phase ROS-free: the Simulator with the box and the Controller (computed_torque,
    contact.reaction hold, `loop`: the loop parameters, bringup.processes.LOCKSTEP_LOOP for the
    demo's) in lock step, from rest at the work pose (doc/figures/make_figures.py, tests)."""
    from rbd_control.control import Controller, ControllerConfig, JointTrajectory
    from rbd_control.control.contact import ContactConfig
    from rbd_control.sim.mujoco_model import Obstacle
    from rbd_control.sim.simulator import Simulator

    box = obstacle_box(model)
    simulator = Simulator(urdf, commanded_joints=model.joint_names,
                          initial_positions=WORK_JOINTS,
                          obstacles=[Obstacle(box[:3], box[3:], EE_LINK, PROBE_RADIUS)])
    controller = Controller(model, ControllerConfig(
        mode="computed_torque", contact=ContactConfig(reaction="hold", wrench_link=EE_LINK),
        **loop))
    state = simulator.state()
    controller.update(0.0, state.names, state.position, state.velocity)
    points = trajectory_points(model.joint_names, work_q(model))
    controller.set_trajectory(JointTrajectory.from_arrays(
        model.joint_names, *(np.array(column) for column in zip(*points))), 0.0)
    t, estimated, true, velocity, force = [], [], [], [], 0.0
    order = [list(state.names).index(j) for j in model.joint_names]
    while simulator.time < ACCEL_S + PAN_S + AFTER_S:
        state = simulator.state()
        command = controller.update(state.time, state.names, state.position, state.velocity)
        t.append(state.time)
        estimated.append(controller.contact.tau_ext.copy())
        # the truth of this state: the constraint torque of the step that led to it
        true.append(simulator.contact_torque()[order])
        velocity.append(state.velocity[order])
        simulator.set_command(command.tau)
        simulator.step()
        force = max(force, simulator.contact_force())
    t = np.array(t)
    return analyse(t, np.array(estimated), np.array(true), t, np.array(velocity),
                   controller.contact.detected_at, force, controller.contact.reason)


def summary(result: ContactResult | None, skipped: str = "") -> str:
    head = "contact: computed_torque, contact.reaction hold, tool0 into a box"
    if result is None:
        return f"contact: {skipped}"
    ms = (lambda s: "-" if s is None else f"{1e3 * s:.0f} ms")
    return (f"{head}\n"
            f"  detected {ms(result.delay)} after the true |tau_ext| passed {result.level:g} N m;"
            f" stopped (|qd| < {STOPPED_SPEED:g} rad/s) {ms(result.stop_time)} after the "
            f"detection (limit {1e3 * MAX_STOP_S:.0f} ms)"
            + ("" if result.creep is None else f", then at most {result.creep:.3f} rad/s")
            + f"; peak contact force {result.peak_force:.1f} N\n  {result.reason}")


def problems(result: ContactResult | None) -> list[str]:
    if result is None:
        return []
    if result.true_over is None:
        return ["contact: the arm never pressed on the box beyond the collision level"]
    if result.detected is None:
        return ["contact: the collision was not detected"]
    if result.stop_time is None or not result.stop_time <= MAX_STOP_S:
        return [f"contact: the arm did not stop within {1e3 * MAX_STOP_S:.0f} ms of the "
                f"detection (stopped: {result.stop_time})"]
    return []


def write_plot(output: Path, result: ContactResult, joints) -> Path:
    """~/external_torque against the truth, for the joints the contact loads (over 10 % of the
    largest true torque), around the contact."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    output.mkdir(parents=True, exist_ok=True)
    peak = np.max(np.abs(result.true), axis=0)
    shown = [j for j in range(len(joints)) if peak[j] > 0.1 * peak.max()] or [0]
    touching = np.flatnonzero(np.max(np.abs(result.true), axis=1) > 0.1)
    first = result.time[touching[0]] if len(touching) else result.time[0]
    last = max(x for x in (result.stopped, result.detected, first) if x is not None)
    keep = (result.time >= first - 0.05) & (result.time <= last + 0.1)
    t = result.time[keep] * 1e3
    fig, axes = plt.subplots(len(shown), 1, figsize=(9, 1.2 + 1.9 * len(shown)), sharex=True,
                             squeeze=False)
    for row, j in enumerate(shown):
        ax = axes[row, 0]
        ax.plot(t, result.true[keep, j], "k--", lw=1.2, label="true (MuJoCo qfrc_constraint)")
        ax.plot(t, result.estimated[keep, j], color="C0", lw=1.0,
                label="estimated r (~/external_torque)")
        for sign in (-1, 1):
            ax.axhline(sign * result.level, color="r", lw=0.8, ls=":")
        for at, name, style in ((result.true_over, "true > level", "C3"),
                                (result.detected, "detected", "C2"),
                                (result.stopped, "stopped", "C4")):
            if at is not None:
                ax.axvline(at * 1e3, color=style, lw=0.8, label=name if row == 0 else None)
        ax.set_ylabel(f"{joints[j]}\n[N m]", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].set_title(f"contact: external joint torque, estimated vs true (collision level "
                         f"±{result.level:g} N m red dotted)", fontsize=10)
    axes[0, 0].legend(loc="best", fontsize=7)
    axes[-1, 0].set_xlabel("time since the trajectory was sent [ms]")
    path = output / "contact_detection.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
