"""Helpers of the identification tests: the Pinocchio oracle of test/dynamics (by path), and
the perturbed MuJoCo arm (rbd_control/demo/plant.py) driven by the ROS-free Controller.

Imported by this unique name (`from ident_support import ...`), never through `conftest`.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

from rbd_control.control import Controller, ControllerConfig
from rbd_control.sim.simulator import Simulator

if str(pathlib.Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402, F401  (test_node_corrections loads ros_helpers)

oracles = load("dynamics/dynamics_oracles.py", "rbd_test_ident_dynamics_oracles")

DT = 1e-3


def record_tracking(plant_xml, model, trajectory, duration, *, payloads=(), q0=None,
                    quantum=0.0, noise=None):
    """Follow `trajectory` with feedforward_pd on `model` in the MuJoCo plant; returns the
    recording (t, q, qd, tau) a user would log: measured q (quantised by `quantum`), the
    applied effort (plus noise(tau) when given)."""
    sim = coulomb_plant(plant_xml, model.joint_names, q0, payloads)
    # gains for the loop this runs (1 kHz in lock step, up to the 28 Hz its margins allow,
    # loop_design.py): the plant's friction is unknown to the controller, and the default gains,
    # designed for 250 Hz and 10 ms, are too soft to drag a light wrist through it
    controller = Controller(model, ControllerConfig(mode="feedforward_pd",
                                                    expected_state_period=DT, expected_delay=DT,
                                                    bandwidth_hz=30.0))
    names = sim.joint_names
    order = [names.index(j) for j in model.joint_names]
    controller.update(0.0, names, *measured(sim, quantum))
    controller.set_trajectory(trajectory, 0.0)
    steps = int(round(duration / DT))
    t, Q, QD, TAU = np.empty(steps), *(np.empty((steps, model.nq)) for _ in range(3))
    for k in range(steps):
        q, qd = measured(sim, quantum)
        command = controller.update(sim.time, names, q, qd)
        sim.set_command(command.tau)
        t[k], Q[k], QD[k], TAU[k] = sim.time, q[order], qd[order], sim.command
        sim.step()
    if noise is not None:
        TAU = noise(TAU)
    return dict(t=t, q=Q, qd=QD, tau=TAU)


def coulomb_plant(plant_xml, joint_names, q0, payloads=()):
    """The Simulator with frictionloss acting as Coulomb friction (stiff_friction), as
    rbd_mujoco_sim runs it with stiff_friction: true."""
    return Simulator(plant_xml, commanded_joints=joint_names, timestep=DT, payloads=payloads,
                     initial_positions=dict(zip(joint_names, q0)), stiff_friction=True)


def measured(sim, quantum):
    state = sim.state()
    q = state.position if quantum == 0 else np.round(state.position / quantum) * quantum
    return q, state.velocity
