"""The demo's Cartesian phase: in cartesian_impedance the end effector is sent by ~/target_pose
to a work pose (the home pose has tool0 almost above the shoulder axis, close to a singularity
where Lambda is damped and the posture spring leaks into the task), then MuJoCo pushes it
with a known force through rbd_mujoco_sim's ~/external_wrench: the arm yields to where the
controller's spring balances the push (K^-1 F for a small push, K the spring the controller
applies: cartesian_stiffness with the task-space modes faster than the loop's design bandwidth
softened, laws/cartesian.py; expected_displacement) and springs back when the push ends.
Recorded from the controller's ~/current_pose (sim time).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbd_control.bringup.processes import CONTROLLER_NODE, SIMULATOR_NODE
from rbd_control.bringup.waypoints import WORK_JOINTS

EE_LINK = "tool0"                      # the controller's ee_link and the pushed link
PUSH_FORCE = np.array([0.0, 10.0, -10.0])   # N, world axes, at the link origin
MOVE_TIMEOUT_S = 15.0                  # sim s to reach the work pose (within SETTLED_M)
SETTLED_M = 1e-3
HOLD_S, PUSH_S, RELEASE_S = 1.0, 3.0, 3.0
AVERAGE_S = 0.5                        # steady values: the mean over the last 0.5 s
MAX_YIELD_ERROR = 0.05                 # |displacement - expected| <= 5 % of expected, per axis
# expected_displacement's solver: the push in 10 growing shares, finite-difference Newton steps
EQUILIBRIUM_STEPS, NEWTON_ITERATIONS, NEWTON_STEP = 10, 20, 1e-6
MAX_SPRING_BACK = 1e-4                 # m left after the release


@dataclass
class CartesianResult:
    time: np.ndarray          # s since the arm settled at the work pose
    displacement: np.ndarray  # (samples, 3) m, from the pose before the push
    expected: np.ndarray      # the law's static equilibrium per axis, m (expected_displacement)
    yielded: np.ndarray       # steady displacement under the push
    residual: np.ndarray      # steady displacement after the release


class CartesianPhase:
    """Subscribes to ~/current_pose now (before the phase) and runs the phase on request."""

    def __init__(self, demo) -> None:
        from geometry_msgs.msg import PoseStamped, WrenchStamped

        self.demo = demo
        self._target = demo.node.create_publisher(
            PoseStamped, f"/{CONTROLLER_NODE}/target_pose", 10)
        self._pose_type = PoseStamped
        self._poses: dict[int, np.ndarray] = {}
        demo.node.create_subscription(
            PoseStamped, f"/{CONTROLLER_NODE}/current_pose", self._on_pose, 5000)
        self._push = demo.node.create_publisher(
            WrenchStamped, f"/{SIMULATOR_NODE}/external_wrench", 10)
        self._wrench_type = WrenchStamped

    def _on_pose(self, msg) -> None:
        key = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        p = msg.pose.position
        self._poses[key] = np.array([p.x, p.y, p.z])

    def _send(self, force) -> None:
        msg = self._wrench_type()
        msg.header.frame_id = EE_LINK
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(f) for f in force)
        self._push.publish(msg)

    def _send_work_pose(self, model) -> np.ndarray:
        from rbd_control.control.laws.pose import quat_from_matrix
        from rbd_control.dynamics import frame_pose

        T = frame_pose(model, [WORK_JOINTS[j] for j in model.joint_names], EE_LINK)
        msg = self._pose_type()
        msg.header.frame_id = model.link_names[0]
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = (float(x) for x in T[:3, 3])
        o.x, o.y, o.z, o.w = (float(x) for x in quat_from_matrix(T[:3, :3]))
        self._target.publish(msg)
        return T[:3, 3]

    def _latest(self) -> np.ndarray:
        return self._poses[max(self._poses)] if self._poses else np.full(3, np.inf)

    def run(self, model, stiffness, loop) -> CartesianResult:
        phase, demo = "cartesian_impedance", self.demo
        demo.set_mode(phase)
        demo.wait_for_sim_time(demo.recorder.sim_time + 0.2, phase)
        goal = self._send_work_pose(model)
        # The move's duration depends on where the arm was: wait until it is there. The goal
        # is sent again every second: a watchdog trip (the controller starved of CPU for
        # longer than state_timeout) drops the target, and a repeat of the same goal moves
        # the target nowhere (it starts from the current target).
        deadline = demo.recorder.sim_time + MOVE_TIMEOUT_S
        resend = demo.recorder.sim_time + 1.0
        while np.linalg.norm(self._latest() - goal) > SETTLED_M:
            if demo.recorder.sim_time > deadline:
                raise RuntimeError(f"{EE_LINK} did not reach the work pose {goal} within "
                                   f"{MOVE_TIMEOUT_S:g} s of sim time (last seen at "
                                   f"{self._latest()}, {len(self._poses)} poses received)")
            if demo.recorder.sim_time > resend:
                self._send_work_pose(model)
                resend = demo.recorder.sim_time + 1.0
            demo.wait_for_sim_time(demo.recorder.sim_time + 0.25, phase)
        demo.wait_for_sim_time(demo.recorder.sim_time + 0.5, phase)
        start = demo.recorder.sim_time
        demo.wait_for_sim_time(start + HOLD_S, phase)
        self._send(PUSH_FORCE)
        demo.wait_for_sim_time(start + HOLD_S + PUSH_S, phase)
        self._send(np.zeros(3))
        end = start + HOLD_S + PUSH_S + RELEASE_S
        demo.wait_for_sim_time(end, phase)
        demo.windows[phase] = (start, end)
        return self._result(start, expected_displacement(model, stiffness, loop))

    def _result(self, start, expected) -> CartesianResult:
        keys = sorted(k for k in self._poses if k * 1e-9 >= start)
        t = np.array([k * 1e-9 for k in keys]) - start
        p = np.array([self._poses[k] for k in keys])
        push, release = HOLD_S, HOLD_S + PUSH_S

        def steady(until):
            return p[(t > until - AVERAGE_S) & (t <= until)].mean(axis=0)

        rest = steady(push)
        return CartesianResult(t, p - rest, expected,
                               steady(release) - rest, steady(t[-1]) - rest)


def expected_displacement(model, stiffness, loop) -> np.ndarray:
    """Where PUSH_FORCE moves tool0 from the work pose under the law the controller runs: the
    ROS-free Controller with the node's stiffness and loop parameters (loop: the simulator's,
    bringup.processes.simulator_loop), activated at the work pose, and the pose q at which its
    feedback balances the push at rest,
        tau(q) - g(q) + J(q)^T [0; F] = 0        (at rest the law's C qd + g is g)
    by Newton's method, the force applied in EQUILIBRIUM_STEPS growing shares. The first step
    from the work pose is x = K^-1 [0; F] with K the task stiffness there; with the task-space
    modes faster than the loop's design bandwidth softened (the real-time defaults, 3.5 Hz)
    the arm turns enough under the push that K^-1 F was 25-40 % off, on the pushed axes, the
    equilibrium the simulated arm reaches (this one, to 1e-7 m ROS-free)."""
    from rbd_control.control import Controller, ControllerConfig
    from rbd_control.control.safety.oscillation import OscillationThresholds
    from rbd_control.dynamics import frame_jacobian, frame_pose, gravity

    # the law alone: no state-age softening, no oscillation watch over the solver's jumps
    controller = Controller(model, ControllerConfig(
        mode="cartesian_impedance", ee_link=EE_LINK, cartesian_stiffness=list(stiffness),
        max_state_age=0.0, oscillation=OscillationThresholds(frequency=0.0), **loop))
    names, rest = model.joint_names, np.zeros(model.nq)
    steps = itertools.count(1)           # the controller wants its clock to advance

    def feedback(q):
        return controller.update(1e-3 * next(steps), names, q, rest).tau - gravity(model, q)

    q_work = np.array([WORK_JOINTS[j] for j in names])
    feedback(q_work)                        # activates the law: its target is the work pose
    q = q_work.copy()
    for share in np.arange(1, EQUILIBRIUM_STEPS + 1) / EQUILIBRIUM_STEPS:
        wrench = np.concatenate([np.zeros(3), share * PUSH_FORCE])     # [n; f]

        def residual(q):
            return feedback(q) + frame_jacobian(model, q, EE_LINK).T @ wrench

        for _ in range(NEWTON_ITERATIONS):
            r = residual(q)
            dr_dq = np.column_stack([(residual(q + NEWTON_STEP * e) - r) / NEWTON_STEP
                                     for e in np.eye(model.nq)])
            dq = np.linalg.solve(dr_dq, -r)
            q += dq
            if np.abs(dq).max() < 1e-12:
                break
    return frame_pose(model, q, EE_LINK)[:3, 3] - frame_pose(model, q_work, EE_LINK)[:3, 3]


def summary(result: CartesianResult) -> str:
    mm = 1e3
    return (f"cartesian_impedance: pushed {EE_LINK} with F = {PUSH_FORCE} N for {PUSH_S:g} s\n"
            f"  displacement {np.round(result.yielded * mm, 3)} mm, the law's equilibrium "
            f"{np.round(result.expected * mm, 3)}"
            f" mm; after release {np.round(result.residual * mm, 4)} mm")


def problems(result: CartesianResult) -> list[str]:
    out = []
    pushed = PUSH_FORCE != 0
    error = np.abs(result.yielded - result.expected)[pushed] / np.abs(result.expected[pushed])
    if not np.all(error <= MAX_YIELD_ERROR):
        out.append(f"cartesian_impedance yielded {result.yielded} m under the push, the law's "
                   f"equilibrium is {result.expected} m (limit {MAX_YIELD_ERROR:.0%})")
    if not np.linalg.norm(result.residual) <= MAX_SPRING_BACK:
        out.append(f"cartesian_impedance did not spring back: {result.residual} m left")
    return out


def write_plot(output: Path, result: CartesianResult) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    output.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(9, 4))
    for axis, name in enumerate("xyz"):
        ax.plot(result.time, result.displacement[:, axis] * 1e3, color=f"C{axis}",
                label=f"{name} displacement")
        if PUSH_FORCE[axis]:
            ax.hlines(result.expected[axis] * 1e3, HOLD_S, HOLD_S + PUSH_S, colors=f"C{axis}",
                      linestyles="--", label=f"law's equilibrium, {name}")
    ax.axvspan(HOLD_S, HOLD_S + PUSH_S, color="0.9", label=f"push {PUSH_FORCE} N")
    ax.set_xlabel("time since the arm settled at the work pose [s]")
    ax.set_ylabel(f"{EE_LINK} displacement [mm]")
    ax.set_title("cartesian_impedance: MuJoCo pushes the end effector, it yields to the law's "
                 "equilibrium and springs back")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    path = output / "cartesian_impedance_push.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
