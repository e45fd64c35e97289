"""A DART plant beside MuJoCo's: the physics engine Gazebo Harmonic steps through
gz-physics' dartsim plugin, driven by joint efforts and indexed by joint name (no rclpy).

This is the only module that calls dartpy, so DART 7's snake_case API is a change here
alone. The plant offers the simulator node what sim/simulator.py's MuJoCo Simulator offers
(sim/plant.py's EffortPlant) with the same input checks (shared there), so the node and a
controller cannot tell the engines apart except by their physics.

What the URDF becomes in DART:
- the text is the dynamics core's filtered description (visuals, collisions, meshes and so
  package:// URIs are dropped, as for MuJoCo: no contact in either plant) after the core's
  loader accepted it; a floating or planar base joint is welded (sim/plant.py), and the root
  is loaded FIXED, so an arm without a world joint is welded to the world, not floating;
- every joint is FORCE actuated (a <mimic> joint too: the core treats it as independent);
- URDF <dynamics friction> is DART's Coulomb joint friction and <dynamics damping> its joint
  damping coefficient (implicit in the step, as MuJoCo's), except on a joint that has both:
  there DART 6's implicit damping inflates the friction constraint's force (measured with
  b = 0.15 N m s/rad, f_c = 0.3 N m on the default arm's wrist_3 at 1 kHz: 0.49 N m sliding
  under 1 N m, 0.50 N m against 0.5 N m, which moved it at 0.02 rad/s; exact with b = 0; the
  excess grows with b dt / inertia), so its damping is applied as an explicit joint force
  -b q̇ (step-start velocity) where that step is monotone (b dt < EXPLICIT_DAMPING_LIMIT
  times the joint's effective inertia, see _explicit_damping);
- the URDF position and velocity limits are DART's joint limits, enforced by its constraint
  solver: what gz-physics' dartsim plugin copies from SDF's <axis> (SDFFeatures,
  CopyStandardJointAxisProperties; sdformat's URDF parser fills <axis> from <dynamics> and
  <limit>). So, unlike the MuJoCo plant, a joint never exceeds its URDF
  velocity limit (joint_limits=False lifts both);
- a link without <inertial> is massless, as in the dynamics core (DART's loader would
  give it 1 kg).
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from typing import Mapping, Sequence

import dartpy as dart
import numpy as np

from rbd_control.dynamics import crba, load_urdf
from rbd_control.dynamics.free_inertia import free_joint_inertia, regularised_inverse
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.dynamics.urdf_xml import dynamics_elements
from rbd_control.sim.plant import (URDF_GRAVITY, CommandedJoints, JointStateSample, Payload,
                                   PlantOptions, checked_disturbance, checked_initial_positions,
                                   checked_wrench, weld_base_joints)

__all__ = ["DART_VERSION", "DartSimulator"]

DART_VERSION = getattr(dart, "__version__", "unknown")

# A Uri is required by the string parser; with no meshes left nothing is ever fetched from it.
_BASE_URI = "file:///rbd_control/robot.urdf"
# b dt / m_i below which a joint's damping may be an explicit force: the velocity's decay
# factor 1 - b dt / m_i stays in (0, 1), monotone like the implicit step's 1 / (1 + b dt / m_i)
EXPLICIT_DAMPING_LIMIT = 1.0
_INERTIA_POSES = 16            # random poses (fixed seed) beside the reset pose and zero


class DartSimulator(CommandedJoints):
    """A DART plant driven by joint efforts, indexed by joint name.

    DartSimulator(urdf_xml, joint_limits=True, gravity=URDF_GRAVITY, **options): the options
    are sim/plant.py's PlantOptions and mean what they mean for the MuJoCo Simulator, except:
    stiff_friction: accepted for the same call; DART's joint friction is a hard constraint
        (full Coulomb force at any speed) either way.
    obstacles: refused (MuJoCo only).
    joint_limits: the URDF position and velocity limits as DART's joint limits.
    gravity: the world's gravity, URDF axes.
    """

    def __init__(self, urdf_xml: str, *, joint_limits: bool = True,
                 gravity: Sequence[float] = URDF_GRAVITY, **options) -> None:
        options = PlantOptions(**options)
        if tuple(options.obstacles):
            # the MuJoCo plant's probe-and-box contact pair (mujoco_model.Obstacle) has no
            # counterpart here: this plant, like MuJoCo's, strips the URDF's collision shapes
            raise ValueError("obstacles are simulated by the MuJoCo plant only (engine: mujoco)")
        checked = load_urdf(urdf_xml, gravity=gravity)   # what the core refuses, DART never sees
        self.model_warnings = checked.warnings
        self.model_adjustments = ()    # DART takes real robots' inertias as written
        self.skeleton = _load_skeleton(_welded_text(urdf_xml))
        for payload in options.payloads:
            _attach_payload(self.skeleton, payload)
        losses = dict(zip(checked.joint_names, zip(checked.damping, checked.friction)))
        explicit = (_explicit_damping(checked, float(options.timestep),
                                      options.initial_positions or {})
                    if options.joint_damping else {})
        _set_up_joints(self.skeleton, losses if options.joint_damping else {}, joint_limits,
                       explicit)
        self._compensates_gravity = bool(options.compensates_gravity)
        self.world = dart.simulation.World()
        self.world.setGravity(np.asarray(gravity, dtype=float))
        self.world.setTimeStep(float(options.timestep))
        self.world.addSkeleton(self.skeleton)

        # After welding, every dof is a 1-DoF joint's and carries the joint's name.
        dofs = [self.skeleton.getDof(i).getName() for i in range(self.skeleton.getNumDofs())]
        reported = JointMap.by_name(dofs, dofs)
        names = options.commanded_names(reported.names)
        commanded = JointMap.by_name(names, dofs, "the DART plant")
        limits = JointMap.by_name(names, checked.joint_names, "the robot description")
        super().__init__(reported, commanded, limits.take(checked.effort_limit).copy()
                         if options.clamp_effort else None)
        # per dof: the damping applied as an explicit force (0 where DART's implicit one acts)
        self.explicit_damping = reported.put([explicit.get(name, 0.0) for name in reported.names])
        self._disturbance = np.zeros(self.skeleton.getNumDofs())
        self._wrenches = {}    # link name -> (BodyNode, force, torque, point in link frame)
        self.reset(options.initial_positions or {})

    # --- properties -----------------------------------------------------------

    @property
    def timestep(self) -> float:
        return float(self.world.getTimeStep())

    @property
    def time(self) -> float:
        return float(self.world.getTime())

    # --- commands and stepping ------------------------------------------------

    def set_disturbance(self, torques: Mapping[str, float]) -> None:
        """External joint torques {joint: N m} added to the command from now on; not clamped,
        not reported as effort. An empty mapping removes them."""
        torques = checked_disturbance(torques, self._reported.names)
        self._disturbance = self._reported.put(
            [torques.get(name, 0.0) for name in self._reported.names])

    def set_external_wrench(self, link: str, force: Sequence[float],
                            torque: Sequence[float] = (0.0, 0.0, 0.0),
                            point: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        """Push `link` from now on: `force` (N) at `point` (link frame; default its origin)
        plus a pure `torque` (N m), both in world axes. Zero force and torque remove it.
        DART's body frame is the URDF link frame, so the point needs no conversion."""
        body = self.skeleton.getBodyNode(link)
        if body is None:
            raise KeyError(f"no link {link!r} in the simulated robot")
        force, torque, point = checked_wrench(link, force, torque, point)
        if np.any(force) or np.any(torque):
            self._wrenches[link] = (body, force, torque, point)
        else:
            self._wrenches.pop(link, None)

    def step(self, count: int = 1) -> None:
        """Advance `count` physics steps holding the current command (and disturbance).

        World.step clears joint forces and external forces after each step, so both are
        applied again before every step."""
        forces = self._commanded.put(self._command) + self._disturbance
        for _ in range(count):
            # compensates_gravity: DART's gravity term of this pose added, as the robot would
            own = self.skeleton.getGravityForces() if self._compensates_gravity else 0.0
            self.skeleton.setForces(forces + own
                                    - self.explicit_damping * self.skeleton.getVelocities())
            for body, force, torque, point in self._wrenches.values():
                body.addExtForce(force, point, False, True)   # world-axes force, local point
                body.addExtTorque(torque, False)
            self.world.step()
            if not (np.all(np.isfinite(self.skeleton.getPositions()))
                    and np.all(np.isfinite(self.skeleton.getVelocities()))):
                self._blow_ups += 1
                self._rest_at({})

    def state(self) -> JointStateSample:
        applied = self._commanded.put(self._command)
        return JointStateSample(
            time=self.time,
            names=self._reported.names,
            position=self._reported.take(self.skeleton.getPositions()).copy(),
            velocity=self._reported.take(self.skeleton.getVelocities()).copy(),
            effort=self._reported.take(applied).copy(),
        )

    def reset(self, initial_positions: Mapping[str, float]) -> None:
        """Back to t = 0 at rest at `initial_positions` (others at 0), zero command, no
        external wrench."""
        initial_positions = checked_initial_positions(initial_positions, self._reported.names)
        self._rest_at(initial_positions)
        self.world.setTime(0.0)
        self._command = np.zeros_like(self._command)
        self._wrenches.clear()

    def set_time(self, time: float) -> None:
        """Continue the clock from `time` (a new model after one that ran)."""
        self.world.setTime(float(time))

    # --- the dynamics DART computes (cross-checks against the core) --------------

    def mass_matrix(self, q: Sequence[float]) -> np.ndarray:
        """H(q) in joint_names order (Skeleton.getMassMatrix)."""
        self._set_state(q, np.zeros(len(self._reported)))
        return self._reported.take_matrix(self.skeleton.getMassMatrix()).copy()

    def bias_forces(self, q: Sequence[float], qd: Sequence[float]) -> np.ndarray:
        """C(q, q̇) q̇ + g(q) in joint_names order (Skeleton.getCoriolisAndGravityForces)."""
        self._set_state(q, qd)
        return self._reported.take(self.skeleton.getCoriolisAndGravityForces()).copy()

    # --- helpers --------------------------------------------------------------

    def _set_state(self, q, qd) -> None:
        self.skeleton.setPositions(self._reported.put(np.asarray(q, dtype=float)))
        self.skeleton.setVelocities(self._reported.put(np.asarray(qd, dtype=float)))

    def _rest_at(self, positions: Mapping[str, float]) -> None:
        self._set_state([positions.get(name, 0.0) for name in self._reported.names],
                        np.zeros(len(self._reported)))


def _welded_text(urdf_xml: str) -> str:
    robot = ET.fromstring(dynamics_elements(urdf_xml))
    weld_base_joints(robot)
    return ET.tostring(robot, encoding="unicode")


# DART's complaints about links without <inertial>: massless on purpose (see the module doc).
_MASSLESS_NOTICE = re.compile(r"Inertia::verifyMoment|Inertia::setMoment|negative or zero mass")


def _load_skeleton(urdf_text: str):
    with _dart_output() as output:
        loader = dart.utils.DartLoader()
        options = loader.getOptions()
        options.mDefaultRootJointType = dart.utils.DartLoader.RootJointType.FIXED
        options.mDefaultInertia = dart.dynamics.Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
        loader.setOptions(options)
        skeleton = loader.parseSkeletonString(urdf_text, dart.common.Uri(_BASE_URI))
    if skeleton is None:
        raise ValueError(f"DART cannot parse the URDF: {' '.join(output) or 'no reason given'}")
    for line in output:
        print(f"DART: {line}", file=sys.stderr)
    root = skeleton.getRootJoint().getType()
    if root != "WeldJoint":   # a floating arm would fall away instead of being controlled
        raise ValueError(f"DART made the root joint a {root}, not a weld")
    return skeleton


@contextlib.contextmanager
def _dart_output():
    """Collect what DART prints on the process's stderr (C++, below Python's sys.stderr) into
    a list of lines, without colour codes and without the massless-link notices."""
    lines = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = re.sub(r"\x1b\[[0-9;]*m", "", capture.read().decode(errors="replace"))
            lines.extend(line.strip() for line in text.splitlines()
                         if line.strip() and not _MASSLESS_NOTICE.search(line))


def _explicit_damping(model, timestep: float, initial_positions) -> dict:
    """{joint: b} of the joints with both damping b and Coulomb friction whose damping may be
    an explicit force: b dt < EXPLICIT_DAMPING_LIMIT m_i, m_i = min over poses of
    1 / (H(q)^-1)_ii, the inertia the joint feels with every other joint free (the reset pose,
    zero and _INERTIA_POSES random poses within the limits; a payload only adds inertia)."""
    both = (model.damping > 0) & (model.friction > 0)
    if not np.any(both):
        return {}
    limits = np.where(np.isfinite(model.position_limits), model.position_limits,
                      [-math.pi, math.pi])
    rng = np.random.default_rng(0)
    poses = [np.array([initial_positions.get(n, 0.0) for n in model.joint_names], dtype=float),
             np.clip(np.zeros(model.nq), limits[:, 0], limits[:, 1])]
    poses += list(rng.uniform(limits[:, 0], limits[:, 1], size=(_INERTIA_POSES, model.nq)))
    felt = np.min([free_joint_inertia(regularised_inverse(crba(model, q))) for q in poses],
                  axis=0)
    explicit = both & (model.damping * timestep < EXPLICIT_DAMPING_LIMIT * felt)
    return {name: float(b) for name, b, use in zip(model.joint_names, model.damping, explicit)
            if use}


def _set_up_joints(skeleton, losses: Mapping[str, tuple[float, float]], limits: bool,
                   explicit: Mapping[str, float]) -> None:
    """Actuation, losses and limits of every joint; the joints in `explicit` get no DART
    damping (the plant applies it as a force)."""
    for j in range(skeleton.getNumJoints()):
        joint = skeleton.getJoint(j)
        joint.setActuatorType(dart.dynamics.ActuatorType.FORCE)
        if joint.getNumDofs() != 1:
            continue
        damping, friction = losses.get(joint.getName(), (0.0, 0.0))
        joint.setDampingCoefficient(0, 0.0 if joint.getName() in explicit else float(damping))
        joint.setCoulombFriction(0, float(friction))
        joint.setLimitEnforcement(bool(limits))


def _attach_payload(skeleton, payload: Payload) -> None:
    parent = skeleton.getBodyNode(payload.link)
    if parent is None:
        raise KeyError(f"payload link {payload.link!r} is not a link of the robot")
    joint, body = parent.createWeldJointAndBodyNodePair()
    offset = dart.math.Isometry3()
    offset.set_translation(np.asarray(payload.com, dtype=float))
    joint.setTransformFromParentBodyNode(offset)
    body.setMass(float(payload.mass))
    ixx, iyy, izz = map(float, payload.inertia)
    body.setMomentOfInertia(ixx, iyy, izz, 0.0, 0.0, 0.0)
