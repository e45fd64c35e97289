"""Physics stepping for the simulator node, free of rclpy.

The node (rbd_control.ros.simulator.node) only moves messages in and out; everything a
test might want to check without ROS — what an effort command does, how time
advances, what the joint state reports — lives here.

The command semantics copy effort_controllers/JointGroupEffortController on top of
gz_ros2_control, so that swapping Gazebo for this simulator changes nothing for the
controller: the last command is applied until a new one arrives (no timeout), and
the reported joint effort is the effort actually applied.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import mujoco
import numpy as np

from rbd_control.dynamics import gravity, load_urdf
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.sim.hand import HandGains, checked_hand_target, hand_wrench
from rbd_control.sim.mujoco_model import build_mujoco_plant, joint_index
from rbd_control.sim.plant import (CommandedJoints, JointStateSample, PlantOptions,
                                   checked_disturbance, checked_initial_positions, checked_wrench)

__all__ = ["Simulator"]


class Simulator(CommandedJoints):
    """A MuJoCo plant driven by joint efforts, indexed by joint name.

    Simulator(urdf_xml, **options): the options are sim/plant.py's PlantOptions.
    reported joints (`state().names`): every 1-DoF joint, like joint_state_broadcaster.
    stiff_friction: MuJoCo's frictionloss made stiff (_stiffen_friction).
    obstacles: `contact_torque` and `contact_force` report the contact's ground truth.
    """

    def __init__(self, urdf_xml: str, **options) -> None:
        options = PlantOptions(**options)
        plant = build_mujoco_plant(
            urdf_xml, joint_damping=options.joint_damping, timestep=options.timestep,
            payloads=options.payloads, obstacles=options.obstacles)
        self.model = plant.model
        if options.stiff_friction:
            _stiffen_friction(self.model)
        # what MuJoCo needed changed (balanced inertias, bound masses) and the loader's warnings
        self.model_adjustments, self.model_warnings = plant.adjustments, plant.warnings
        self.data = mujoco.MjData(self.model)
        reported = joint_index(self.model)
        commanded = joint_index(self.model, options.commanded_names(reported.names))
        super().__init__(reported, commanded,
                         self._limits(commanded) if options.clamp_effort else None)
        self._disturbance = np.zeros(self.model.nv)
        # compensates_gravity: the URDF's g(q) (the dynamics core's), added at every step
        self._gravity = None
        if options.compensates_gravity:
            urdf = load_urdf(urdf_xml)
            self._gravity = (urdf, JointMap.by_name(urdf.joint_names, reported.names))
        self._wrenches = {}   # MuJoCo body id -> (force, torque, point in body frame), world axes
        self._hand = None     # (body id, target position, target quaternion wxyz, HandGains)
        self._hand_jacobians = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))
        self.reset(options.initial_positions or {})

    # --- properties -----------------------------------------------------------

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def time(self) -> float:
        return float(self.data.time)

    # --- commands and stepping ------------------------------------------------

    def set_disturbance(self, torques: Mapping[str, float]) -> None:
        """External joint torques {joint: N m} added to the command from now on: a push, or a
        joint blocked by an obstacle. Not clamped, not reported as joint effort (that is
        what the drive applies). An empty mapping removes them."""
        vector = np.zeros(self.model.nv)
        for name, value in checked_disturbance(torques, self._reported.names).items():
            vector[self._reported.dof_adr[self._reported.names.index(name)]] = value
        self._disturbance = vector

    def step(self, count: int = 1) -> None:
        """Advance `count` physics steps holding the current command (and disturbance)."""
        self.data.qfrc_applied[:] = (
            self._commanded.dof_vector(self._command, self.model.nv) + self._disturbance)
        for _ in range(count):
            before = self.data.time
            # mj_step split as MuJoCo documents for forces that depend on the pose: step1
            # computes this step's kinematics, so the wrench's moment arm is not a step old
            # (it was, before: 1e-3 rad apart from DART after 0.2 s of a push on tool0)
            mujoco.mj_step1(self.model, self.data)
            self._apply_wrenches()
            self._apply_hand()
            self._apply_gravity()
            mujoco.mj_step2(self.model, self.data)
            if self.data.time < before:
                # MuJoCo found NaN/huge positions, velocities or accelerations and reset
                # the whole state, time and warning counters included; /clock must not
                # jump back, and the reset must not go unnoticed.
                self._blow_ups += 1
                self.data.time = before + self.model.opt.timestep
                self.data.qfrc_applied[:] = (
                    self._commanded.dof_vector(self._command, self.model.nv) + self._disturbance)

    def _apply_gravity(self) -> None:
        """compensates_gravity: the commanded force plus g(q) of this step's pose."""
        if self._gravity is None:
            return
        urdf, to_model = self._gravity
        g = to_model.put(gravity(urdf, to_model.take(self._reported.positions(self.data))))
        self.data.qfrc_applied[:] = (
            self._commanded.dof_vector(self._command, self.model.nv) + self._disturbance)
        self.data.qfrc_applied[self._reported.dof_adr] += g

    def set_time(self, time: float) -> None:
        """Continue the clock from `time` (a new model replacing one that ran: /clock must
        never run backwards)."""
        self.data.time = float(time)

    def state(self) -> JointStateSample:
        applied = np.zeros(self.model.nv)
        applied[self._commanded.dof_adr] = self._command
        return JointStateSample(
            time=self.time,
            names=self._reported.names,
            position=self._reported.positions(self.data),
            velocity=self._reported.velocities(self.data),
            effort=self._reported.take_dofs(applied),
        )

    def contact_torque(self) -> np.ndarray:
        """The joint torques of every constraint now (contacts with obstacles, joint limits),
        MuJoCo's qfrc_constraint, in the reported joints' order."""
        return self._reported.take_dofs(self.data.qfrc_constraint)

    def contact_force(self) -> float:
        """The largest contact normal force now, N (0 without contact)."""
        force, peak = np.zeros(6), 0.0
        for i in range(self.data.ncon):
            mujoco.mj_contactForce(self.model, self.data, i, force)
            peak = max(peak, abs(float(force[0])))
        return peak

    def reset(self, initial_positions: Mapping[str, float]) -> None:
        """Back to t = 0 at rest at `initial_positions` (others at 0), zero command, no
        external wrench."""
        initial_positions = checked_initial_positions(initial_positions, self._reported.names)
        mujoco.mj_resetData(self.model, self.data)
        for name, value in initial_positions.items():
            adr = self._reported.qpos_adr[self._reported.names.index(name)]
            self.data.qpos[adr] = float(value)
        self._command = np.zeros_like(self._command)
        self._wrenches.clear()
        self._hand = None
        mujoco.mj_forward(self.model, self.data)

    def set_external_wrench(self, link: str, force: Sequence[float],
                            torque: Sequence[float] = (0.0, 0.0, 0.0),
                            point: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        """Push `link` from now on: `force` (N) acting at `point` (link frame; default its
        origin) plus a pure `torque` (N m), both in world axes. Zero force and torque remove it.

        MuJoCo's xfrc_applied acts at the body's centre of mass, so the moment of the force
        about it, (p - c) x f, is added every step as the body turns."""
        body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, link)
        if body < 0:
            raise KeyError(f"no link {link!r} in the simulated robot")
        wrench = checked_wrench(link, force, torque, point)
        self.data.xfrc_applied[body] = 0.0
        if np.any(wrench[0]) or np.any(wrench[1]):
            self._wrenches[body] = wrench
        else:
            self._wrenches.pop(body, None)

    def set_hand(self, link: str, position: Sequence[float], quaternion_xyzw: Sequence[float],
                 gains: "HandGains | None") -> None:
        """A hand holds `link` from now on: a spring-damper from its origin to `position` and a
        grip toward `quaternion_xyzw` (world; gains: sim/hand.py), its wrench evaluated at
        every physics step from the link's pose and velocity, as a hand on a handle acts
        (a wrench sent from outside at a lower rate would be late, and its damper unstable on
        a light wrist). gains None: the hand lets go."""
        if gains is None:
            if self._hand is not None:
                self.data.xfrc_applied[self._hand[0]] = 0.0
            self._hand = None
            return
        body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, link)
        if body < 0:
            raise KeyError(f"no link {link!r} in the simulated robot")
        target, quaternion = checked_hand_target(position, quaternion_xyzw)
        self._hand = (body, target, quaternion, gains)

    def _apply_hand(self) -> None:
        if self._hand is None:
            return
        body, target, quaternion, gains = self._hand
        d = self.data
        jacp, jacr = self._hand_jacobians   # preallocated: this runs every physics step
        mujoco.mj_jacBody(self.model, d, jacp, jacr, body)   # at the body frame's origin
        force, torque = hand_wrench(gains, target, quaternion, d.xpos[body], d.xquat[body],
                                    jacp @ d.qvel, jacr @ d.qvel)
        if body not in self._wrenches:
            d.xfrc_applied[body] = 0.0
        # xfrc_applied acts at the centre of mass: the force's moment about it
        d.xfrc_applied[body, :3] += force
        d.xfrc_applied[body, 3:] += torque + np.cross(d.xpos[body] - d.xipos[body], force)

    def _apply_wrenches(self) -> None:
        d = self.data
        for body, (force, torque, point) in self._wrenches.items():
            at = d.xpos[body] + d.xmat[body].reshape(3, 3) @ point
            d.xfrc_applied[body, :3] = force
            d.xfrc_applied[body, 3:] = torque + np.cross(at - d.xipos[body], force)

    # --- helpers --------------------------------------------------------------

    def _limits(self, index) -> np.ndarray:
        """URDF <limit effort> per commanded joint; MuJoCo keeps it as actuatorfrcrange."""
        limits = np.full(len(index.names), np.inf)
        for i, name in enumerate(index.names):
            jid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)
            if self.model.jnt_actfrclimited[jid]:
                bound = float(np.max(np.abs(self.model.jnt_actfrcrange[jid])))
                if bound > 0:  # effort="0" in a URDF means "not given", not "no torque"
                    limits[i] = bound
        return limits


def _stiffen_friction(model: mujoco.MjModel) -> None:
    """Make MuJoCo's frictionloss act as Coulomb friction, f_c at any speed above ~0.03 rad/s.

    frictionloss is a soft constraint: with the default solref (0.02 s) and solimp (0.9..0.95)
    the friction force a light joint reaches grows with its inertia (the default arm's wrist_3
    reached 0.11 of its 0.3 N m at 1 rad/s), unlike a real drive. A time constant of two steps
    and impedance 0.99..0.999 give the full f_c on every joint (MuJoCo documentation, "Solver
    parameters": solref = (timeconst, dampratio), solimp = (dmin, dmax, ...)).
    """
    model.dof_solref[:] = (2 * model.opt.timestep, 1.0)
    model.dof_solimp[:, :2] = (0.99, 0.999)
