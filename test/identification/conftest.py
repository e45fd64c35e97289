"""Shared fixtures for the identification tests.

Helpers other test folders own (the Pinocchio oracle in test/dynamics, the MuJoCo plant in
test/control) are loaded by path, as test/sim/conftest.py does, instead of being copied.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

_TEST_DIR = pathlib.Path(__file__).resolve().parents[1]


def _load(relative: str, name: str):
    # the module's own folder first on sys.path, as pytest does for a conftest it loads itself
    # (test/ros/conftest.py imports its sibling shm_segments)
    folder = str((_TEST_DIR / relative).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, _TEST_DIR / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oracles = _load("dynamics/dynamics_oracles.py", "rbd_test_ident_dynamics_oracles")


# --- the "real" robot: a perturbed copy of the default arm ---------------------------------

import re  # noqa: E402

import numpy as np  # noqa: E402

from rbd_control.control import Controller, ControllerConfig  # noqa: E402
from rbd_control.sim.mujoco_model import Payload  # noqa: E402
from rbd_control.sim.simulator import Simulator  # noqa: E402

DT = 1e-3
# true joint friction of the plant: (viscous N m s/rad, Coulomb N m)
TRUE_FRICTION = {
    "shoulder_pan": (2.0, 3.0), "shoulder_lift": (2.5, 4.0), "elbow": (1.2, 2.0),
    "wrist_1": (0.4, 0.8), "wrist_2": (0.3, 0.6), "wrist_3": (0.15, 0.3),
}
TRUE_PAYLOAD = Payload("tool0", 1.5, com=(0.01, -0.02, 0.06), inertia=(4e-3, 3e-3, 2e-3))


def perturbed_urdf(xml: str, seed: int = 7) -> str:
    """Every link's mass (and its inertia with it) and every centre-of-mass coordinate scaled
    by a factor in [0.75, 1.25]; viscous and Coulomb friction from TRUE_FRICTION on every joint."""
    rng = np.random.default_rng(seed)

    def inertial(match):
        block = match.group(0)
        k = rng.uniform(0.75, 1.25)
        block = re.sub(r'<mass value="([^"]+)"', lambda m: f'<mass value="{float(m[1]) * k!r}"',
                       block)
        block = re.sub(r'(i[xyz]{2})="([^"]+)"', lambda m: f'{m[1]}="{float(m[2]) * k!r}"', block)
        return re.sub(r'<origin xyz="([^"]+)"', lambda m: '<origin xyz="{}"'.format(" ".join(
            repr(float(x) * rng.uniform(0.75, 1.25)) for x in m[1].split())), block)

    xml = re.sub(r"<inertial>.*?</inertial>", inertial, xml, flags=re.S)
    for joint, (b, f) in TRUE_FRICTION.items():
        xml = re.sub(rf'(<joint name="{joint}".*?)<dynamics [^>]*/>',
                     rf'\1<dynamics damping="{b}" friction="{f}"/>', xml, count=1, flags=re.S)
    return xml


def record_tracking(plant_xml, model, trajectory, duration, *, payloads=(), q0=None,
                    quantum=0.0, noise=None):
    """Follow `trajectory` with feedforward_pd on `model` in the MuJoCo plant; returns the
    recording (t, q, qd, tau) a user would log: measured q (quantised by `quantum`), the
    applied effort (plus noise(tau) when given)."""
    sim = coulomb_plant(plant_xml, model.joint_names, q0, payloads)
    controller = Controller(model, ControllerConfig(mode="feedforward_pd"))
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
    """The Simulator with MuJoCo's frictionloss made stiff enough to act as Coulomb friction.

    With the default soft constraint (solref 0.02 s, solimp 0.9..0.95) the friction force a
    light joint reaches grows with its inertia (wrist_3 reached 0.11 of its 0.3 N m at 1 rad/s),
    unlike a real drive; a 2 ms time constant and impedance 0.99..0.999 give the full f_c above
    ~0.03 rad/s on every joint.
    """
    sim = Simulator(plant_xml, commanded_joints=joint_names, timestep=DT, payloads=payloads,
                    initial_positions=dict(zip(joint_names, q0)))
    sim.model.dof_solref[:] = (2 * DT, 1.0)
    sim.model.dof_solimp[:, :2] = (0.99, 0.999)
    return sim


def measured(sim, quantum):
    state = sim.state()
    q = state.position if quantum == 0 else np.round(state.position / quantum) * quantum
    return q, state.velocity


# --- the ROS fixtures of test/ros (rclpy nodes in their own processes) -------------------

ros_fixtures = _load("ros/conftest.py", "rbd_test_ident_ros_fixtures")
ros_env, ros_node, spawn_node = ros_fixtures.ros_env, ros_fixtures.ros_node, ros_fixtures.spawn_node
