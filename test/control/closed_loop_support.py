"""The closed-loop harness of the controller tests: a MuJoCo copy of a URDF driven by joint
torques, and a lock-step loop. A module of its own (not conftest) so that test modules can import
it by a name no other test directory uses."""
from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from rbd_control.control import Controller
from rbd_control.sim.mujoco_model import build_mujoco_model, joint_index

DT = 1e-3  # the 1 kHz control and physics rate of the acceptance tests


@dataclass
class Plant:
    """A MuJoCo copy of a URDF driven by joint torques, read and written by joint name."""

    model: mujoco.MjModel
    joint_names: tuple
    data: mujoco.MjData = field(init=False)

    def __post_init__(self):
        self.data = mujoco.MjData(self.model)
        self.index = joint_index(self.model, self.joint_names)

    def reset(self, q, qd=None):
        mujoco.mj_resetData(self.model, self.data)
        self.index.set_positions(self.data, q)
        if qd is not None:
            self.index.set_velocities(self.data, qd)
        mujoco.mj_forward(self.model, self.data)

    @property
    def time(self) -> float:
        return float(self.data.time)

    def state(self):
        return self.index.positions(self.data), self.index.velocities(self.data)

    def step(self, tau):
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.index.dof_adr] = tau
        mujoco.mj_step(self.model, self.data)


def make_plant(urdf_xml, joint_names, **kwargs) -> Plant:
    """A frictionless, undamped plant (the URDF's damping is zero anyway) at 1 kHz."""
    kwargs.setdefault("joint_damping", False)
    return Plant(build_mujoco_model(urdf_xml, timestep=DT, **kwargs), tuple(joint_names))


def run_closed_loop(controller: Controller, plant: Plant, duration: float, on_step=None):
    """Run controller and plant in lock step; return arrays of time, q, desired q, tau.

    The controller sees the state at the start of each step and its torque is held for the
    step (one sample of delay, as on a real bus). on_step(t, controller) may act mid-run.
    """
    steps = int(round(duration / DT))
    n = len(controller.joint_names)
    times = np.empty(steps)
    q_log, qd_log, qd_des, q_des, tau_log = (np.empty((steps, n)) for _ in range(5))
    names = plant.joint_names
    for k in range(steps):
        t = plant.time
        if on_step is not None:
            on_step(t, controller)
        q, qd = plant.state()
        command = controller.update(t, names, q, qd)
        plant.step(command.tau)
        times[k] = t
        q_log[k], qd_log[k], tau_log[k] = q, qd, command.tau
        q_des[k], qd_des[k] = command.desired_q, command.desired_qd
    return dict(t=times, q=q_log, qd=qd_log, q_des=q_des, qd_des=qd_des, tau=tau_log)


def residual_over_the_demo(controller, sim, names):
    """Follow the demo trajectory (bringup.waypoints) in lock step from the plant's state with
    contact awareness on: (peak |r| per joint, states flagged in contact)."""
    from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
    from rbd_control.control import JointTrajectory, TrajectoryPoint

    state = sim.state()
    controller.update(0.0, state.names, state.position, state.velocity)
    points = [TrajectoryPoint(q, v, a, time_from_start=t)
              for t, q, v, a in demo_waypoints(DEFAULT_ARM_HOME, names)]
    controller.set_trajectory(JointTrajectory(names, points), 0.0)
    peak, flagged = np.zeros(len(names)), 0
    while sim.time < points[-1].time_from_start + 0.5:
        state = sim.state()
        command = controller.update(state.time, state.names, state.position, state.velocity)
        sim.set_command(command.tau)
        sim.step()
        peak = np.maximum(peak, np.abs(controller.contact.tau_ext))
        flagged += controller.contact.detector.in_contact
    return peak, flagged
