"""Acceptance of cartesian_impedance with MuJoCo as the plant: panda (example-robot-data) and the
default arm, 1 kHz, no ROS. Poses are read from MuJoCo's own kinematics, not from our model.

Each test prints its measured figures (run with `-s` to see them).
"""
from __future__ import annotations

import importlib.util
import pathlib
from dataclasses import dataclass

import mujoco
import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.laws.pose import orientation_error, quat_from_matrix, quat_multiply
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import frame_jacobian, frame_pose, load_urdf
from rbd_control.sim import Simulator

_ORACLES = pathlib.Path(__file__).resolve().parents[1] / "dynamics" / "dynamics_oracles.py"
_spec = importlib.util.spec_from_file_location("rbd_test_dynamics_oracles", _ORACLES)
_oracles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracles)


@dataclass(frozen=True)
class Arm:
    name: str
    urdf: str
    flange: str
    q0: tuple


ARMS = {
    "default_arm": lambda: Arm("default_arm", default_arm_urdf(), "flange_link",
                               (0.0, 0.6, -0.9, 0.4, 0.3, 0.0)),
    "panda": lambda: Arm("panda", (_oracles.robots_dir() / "panda_description/urdf/panda.urdf")
                         .read_text(), "panda_link8",
                         (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02)),
}
STIFFNESS = (800.0, 1000.0, 1200.0, 15.0, 12.0, 10.0)   # distinct per axis: F/K is per axis


class Loop:
    """Simulator + Controller in lock step; the controller sees the state at each step's start."""

    def __init__(self, arm: Arm, q0=None, **config):
        self.arm = arm
        self.model = load_urdf(arm.urdf)
        names = self.model.joint_names
        q0 = arm.q0 if q0 is None else q0
        self.sim = Simulator(arm.urdf, commanded_joints=names,
                             initial_positions=dict(zip(names, map(float, q0))))
        config.setdefault("cartesian_stiffness", STIFFNESS)
        # the loop it runs: 1 kHz in lock step (the command acts over the step after its state),
        # with no bandwidth bound below what those margins allow (loop_design.py, cartesian.py)
        config.setdefault("expected_state_period", 1e-3)
        config.setdefault("expected_delay", 0.0)
        config.setdefault("bandwidth_hz", 1000.0)
        self.controller = Controller(self.model, ControllerConfig(
            mode="cartesian_impedance", ee_link=arm.flange, **config))
        self.limit = self.controller._limiter.limit
        self.body = mujoco.mj_name2id(self.sim.model, mujoco.mjtObj.mjOBJ_BODY, arm.flange)
        self.tau = []
        self.step()

    def step(self):
        s = self.sim.state()
        command = self.controller.update(s.time, s.names, s.position, s.velocity)
        self.tau.append(command.tau)
        self.sim.set_command(command.tau)
        self.sim.step()
        return command

    def run(self, seconds):
        for _ in range(int(round(seconds / self.sim.timestep))):
            self.step()

    def pose(self):
        """(position, quaternion xyzw) of the flange from MuJoCo."""
        mujoco.mj_kinematics(self.sim.model, self.sim.data)
        d = self.sim.data
        return d.xpos[self.body].copy(), quat_from_matrix(d.xmat[self.body].reshape(3, 3))

    def q(self):
        s = self.sim.state()
        index = [s.names.index(name) for name in self.model.joint_names]
        return s.position[index], s.velocity[index]

    def torques_were_safe(self):
        tau = np.array(self.tau)
        return bool(np.all(np.isfinite(tau)) and np.all(np.abs(tau) <= self.limit + 1e-12))


def angle_between(qa, qb):
    return 2.0 * np.arccos(min(abs(float(qa @ qb)), 1.0))


@pytest.fixture(params=sorted(ARMS))
def arm(request):
    return ARMS[request.param]()


def test_pose_target_15cm_30deg_away_is_reached_within_3_s(arm):
    loop = Loop(arm)
    p0, quat0 = loop.pose()
    direction = np.array([1.0, -1.0, 0.5]) / 1.5
    target_p = p0 + 0.15 * direction
    axis = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    turn = np.append(np.sin(np.radians(15.0)) * axis, np.cos(np.radians(15.0)))   # 30 deg
    target_q = quat_multiply(turn, quat0)
    loop.controller.set_pose_target(target_p, target_q, loop.sim.time)
    loop.run(2.9)
    errors = []
    for _ in range(100):   # the last 0.1 s of the 3 s
        loop.step()
        p, quat = loop.pose()
        errors.append((np.linalg.norm(p - target_p), angle_between(quat, target_q)))
    position_error, angle_error = np.max(errors, axis=0)
    print(f"\n{arm.name}: 15 cm / 30 deg target, error over 2.9-3.0 s: "
          f"{position_error * 1e3:.3g} mm, {angle_error * 1e3:.3g} mrad")
    assert position_error < 1e-3 and angle_error < 1e-3
    assert loop.torques_were_safe()


def test_constant_10N_at_the_flange_displaces_it_by_F_over_K_per_axis(arm):
    loop = Loop(arm)
    loop.run(0.3)
    p_rest, _ = loop.pose()
    translational = np.array(STIFFNESS[:3])
    for axis in range(3):
        force = np.zeros(3)
        force[axis] = 10.0
        loop.sim.set_external_wrench(arm.flange, force)
        loop.run(2.0)
        displacement = loop.pose()[0] - p_rest
        expected = force / translational
        print(f"\n{arm.name}: 10 N along axis {axis}: displacement {displacement * 1e3} mm, "
              f"F/K = {expected[axis] * 1e3:.4g} mm")
        assert displacement[axis] == pytest.approx(expected[axis], rel=0.05)
        off_axis = np.delete(displacement, axis)
        assert np.all(np.abs(off_axis) < 0.05 * expected[axis])
        loop.sim.set_external_wrench(arm.flange, np.zeros(3))
        loop.run(2.5)
        assert np.linalg.norm(loop.pose()[0] - p_rest) < 1e-4   # sprung back
    assert loop.torques_were_safe()


def self_motion(model, q, link, distance, steps=200):
    """Move q by `distance` (rad, arm joints) along the Jacobian's null space, keeping the pose:
    a step along the null vector, then a Gauss-Newton correction back onto the pose."""
    target = frame_pose(model, q, link)
    goal = quat_from_matrix(target[:3, :3])
    q = np.array(q, dtype=float)
    for _ in range(steps):
        J = frame_jacobian(model, q, link)
        null = np.linalg.svd(J[:, :7])[2][-1]
        q[:7] += distance / steps * np.sign(null[0]) * null
        for _ in range(3):
            T = frame_pose(model, q, link)
            e = np.concatenate([orientation_error(goal, quat_from_matrix(T[:3, :3])),
                                target[:3, 3] - T[:3, 3]])
            q[:7] += np.linalg.lstsq(frame_jacobian(model, q, link)[:, :7], e, rcond=None)[0]
    return q


def test_nullspace_posture_is_restored_while_the_flange_stays_put():
    """Panda (7-DoF arm): start 0.4 rad along the self-motion from the posture, at the same
    flange pose; the nullspace torque brings the posture back without moving the flange."""
    arm = ARMS["panda"]()
    model = load_urdf(arm.urdf)
    q_posture = np.array(arm.q0)
    q_start = self_motion(model, q_posture, arm.flange, 0.4)
    assert np.abs(q_start - q_posture).max() > 0.1
    # the flange's drift during the self-motion is the uncompensated Lambda Jdot qd over K:
    # the bounds below hold for this (stiffer) task; the nullspace damping 2 sqrt(k_n d) comes
    # from the gains' d (loop_design.py), which counts the coupling of the joints (1.8 mm measured)
    loop = Loop(arm, q0=q_start, nullspace_posture=list(q_posture), nullspace_stiffness=20.0,
                cartesian_stiffness=(1000.0, 1000.0, 1000.0, 50.0, 50.0, 50.0))
    p0, quat0 = loop.pose()
    drift = []
    for _ in range(6):
        loop.run(0.5)
        p, quat = loop.pose()
        drift.append((np.linalg.norm(p - p0), angle_between(quat, quat0)))
    q_end, qd_end = loop.q()
    worst_p, worst_angle = np.max(drift, axis=0)
    posture_error = np.abs(q_end - q_posture)[:7].max()
    print(f"\npanda self-motion of {np.abs(q_start - q_posture).max():.3g} rad: posture error "
          f"after 3 s {posture_error:.3g} rad; flange moved at most {worst_p * 1e3:.3g} mm, "
          f"{worst_angle * 1e3:.3g} mrad")
    assert posture_error < 0.01
    assert worst_p < 2.5e-3 and worst_angle < 5e-3
    assert loop.torques_were_safe()


@pytest.mark.parametrize("where", ["far_outside", "through_the_base_axis"])
def test_unreachable_or_singular_targets_keep_torques_finite_and_limited(arm, where):
    loop = Loop(arm)
    p0, quat0 = loop.pose()
    if where == "far_outside":
        target = np.array([0.0, 0.0, 2.0])     # straight up, beyond reach: stretched arm
    else:
        target = np.array([-p0[0], -p0[1], p0[2]])   # the straight path crosses the base axis
    loop.controller.set_pose_target(target, quat0, loop.sim.time)
    seconds = loop.controller._cartesian.end_time - loop.sim.time + 3.0
    max_errors = []
    for _ in range(int(seconds / 0.5) + 1):
        loop.run(0.5)
        state = loop.controller.cartesian_state
        max_errors.append((np.linalg.norm(state.error[:3]), np.linalg.norm(state.error[3:])))
    _, qd = loop.q()
    print(f"\n{arm.name} {where}: max |tau|/limit {np.max(np.abs(loop.tau) / loop.limit):.2f}, "
          f"final |qd| {np.abs(qd).max():.3g} rad/s, Lambda damping "
          f"{loop.controller.cartesian_state.damping:.3g}")
    assert loop.torques_were_safe()
    assert loop.sim.blow_ups == 0
    assert np.max(max_errors, axis=0)[0] <= 0.1 + 1e-12   # the clip (max_cartesian_error)
    assert np.max(max_errors, axis=0)[1] <= 0.5 + 1e-12
    assert np.abs(qd).max() < 0.05   # 3 s after the target stopped, the arm has stopped too
    if where == "far_outside":   # still pulled at the clip, stretched towards the target
        assert np.linalg.norm(loop.controller.cartesian_state.error[:3]) == pytest.approx(0.1)


def test_simulator_external_wrench_acts_at_the_given_point(arm):
    """MuJoCo's response to Simulator.set_external_wrench equals our forward dynamics with the
    same wrench as f_ext (world, about the world origin): the moment of the force about the
    body's centre of mass is accounted for."""
    from rbd_control.dynamics import forward_dynamics
    loop = Loop(arm)
    q, _ = loop.q()
    names = loop.model.joint_names
    loop.sim.reset(dict(zip(names, map(float, q))))
    force, torque = np.array([3.0, -4.0, 5.0]), np.array([0.2, 0.1, -0.3])
    point = [0.05, 0.02, 0.1]
    loop.sim.set_external_wrench(arm.flange, force, torque, point)
    loop.sim.step()   # zero command, at rest: qacc is the response to the wrench and gravity
    T = frame_pose(loop.model, q, arm.flange)
    at = T[:3, :3] @ point + T[:3, 3]
    wrench = np.concatenate([torque + np.cross(at, force), force])
    expected = forward_dynamics(loop.model, q, np.zeros(len(q)), np.zeros(len(q)),
                                {arm.flange: wrench})
    index = loop.sim._reported  # MuJoCo dof order -> our joint order
    qacc = index.take_dofs(loop.sim.data.qacc)
    ours = qacc[[index.names.index(name) for name in names]]
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)
