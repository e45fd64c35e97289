"""Load any URDF string into MuJoCo as a dynamics-exact plant (no rclpy here).

The simulator and the in-the-loop tests need a physics engine that sees the same
rigid bodies as the controller's model. The description is first read by the
dynamics core's loader (so what it refuses, MuJoCo never sees: duplicate names,
NaN, hostile XML) and MuJoCo is given the loader's filtered text. MuJoCo's URDF
importer does most of the work; what this module adds is the set of switches that
keep the inertias as written (MuJoCo would otherwise fuse, balance or infer them),
the few changes MuJoCo needs to accept real robots' inertias (mujoco_inertia, each
one reported), a floating/planar base joint welded like the loader does, and a
name-based index, because MuJoCo orders joints by its own body tree and callers
must never rely on that order.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import mujoco
import numpy as np

from rbd_control.dynamics import ModelError, load_urdf
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.dynamics.urdf_xml import dynamics_elements
from rbd_control.sim.mujoco_inertia import make_inertias_acceptable
from rbd_control.sim.plant import URDF_GRAVITY, Payload, weld_base_joints

# MuJoCo joint types with exactly one coordinate (URDF revolute/continuous/prismatic).
_ONE_DOF = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))

__all__ = [
    "build_mujoco_model",
    "build_mujoco_plant",
    "Plant",
    "full_mass_matrix",
    "JointIndex",
    "joint_index",
    "Obstacle",
]

# Larger robots are refused: MuJoCo's compile time grows about cubically along a chain.
MAX_PLANT_JOINTS = 500

# Compiler settings injected into the URDF so MuJoCo reproduces its inertias:
#  - inertiafromgeom=false: never derive mass from shapes (we strip the shapes anyway);
#  - balanceinertia=false: MuJoCo's balancing is silent; mujoco_inertia balances the
#    inertias MuJoCo would refuse itself and reports each link;
#  - fusestatic=false: keep every link as a body so payloads can be attached by link
#    name; the masses of fixed-joint children count either way;
#  - discardvisual=true and boundmass/boundinertia=0: nothing invented silently.
_COMPILER_ATTRS = {
    "angle": "radian",
    "inertiafromgeom": "false",
    "balanceinertia": "false",
    "fusestatic": "false",
    "discardvisual": "true",
    "boundmass": "0",
    "boundinertia": "0",
    "strippath": "false",
}


@dataclass(frozen=True)
class Obstacle:
    """A box fixed in the world (`centre`, `half_size` in m, world axes) and a massless sphere
    on `probe_link` (radius m, at the link origin) that can hit it: the plant's only contact
    pair, since the URDF's collision shapes are stripped. MuJoCo reports the contact's joint
    torques in qfrc_constraint (not qfrc_applied)."""

    centre: Sequence[float]
    half_size: Sequence[float]
    probe_link: str
    probe_radius: float = 0.03


@dataclass(frozen=True)
class JointIndex:
    """Where each named 1-DoF joint lives in MuJoCo's state vectors: two JointMaps (the
    control core's one joint-order map), into qpos and into the dof vectors.

    names[i] is stored at qpos[qpos_adr[i]], qvel[dof_adr[i]], qfrc_*[dof_adr[i]].
    Use these methods so no caller ever indexes by MuJoCo's own order.
    """

    qpos: JointMap
    dof: JointMap

    @property
    def names(self) -> tuple[str, ...]:
        return self.qpos.names

    @property
    def qpos_adr(self) -> np.ndarray:
        return self.qpos.index

    @property
    def dof_adr(self) -> np.ndarray:
        return self.dof.index

    def positions(self, data: mujoco.MjData) -> np.ndarray:
        return self.qpos.take(data.qpos).copy()

    def velocities(self, data: mujoco.MjData) -> np.ndarray:
        return self.dof.take(data.qvel).copy()

    def set_positions(self, data: mujoco.MjData, q: Sequence[float]) -> None:
        self.qpos.put_into(data.qpos, np.asarray(q, dtype=float))

    def set_velocities(self, data: mujoco.MjData, qd: Sequence[float]) -> None:
        self.dof.put_into(data.qvel, np.asarray(qd, dtype=float))

    def dof_vector(self, values: Sequence[float], nv: int) -> np.ndarray:
        """Scatter per-name values into a length-nv MuJoCo dof vector (zeros elsewhere)."""
        return self.dof.put(np.asarray(values, dtype=float))

    def take_dofs(self, dof_vector: np.ndarray) -> np.ndarray:
        """Gather a MuJoCo dof vector (e.g. qfrc_inverse) into this index's name order."""
        return self.dof.take(dof_vector).copy()

    def take_matrix(self, full: np.ndarray) -> np.ndarray:
        """Gather an nv x nv matrix (e.g. from mj_fullM) into this index's name order."""
        return self.dof.take_matrix(full).copy()


@dataclass(frozen=True)
class Plant:
    """A compiled MjModel and what had to change for MuJoCo to accept the URDF.

    adjustments: one string per changed link (mujoco_inertia). warnings: the dynamics
    core's Model.warnings for the same URDF (what the controller's model was told)."""

    model: mujoco.MjModel
    adjustments: tuple = ()
    warnings: tuple = ()


def build_mujoco_model(urdf_xml: str, **options) -> mujoco.MjModel:
    """build_mujoco_plant(...).model; see there for the options."""
    return build_mujoco_plant(urdf_xml, **options).model


def build_mujoco_plant(
    urdf_xml: str,
    *,
    joint_damping: bool = True,
    joint_friction: bool | None = None,
    joint_limits: bool = True,
    mimic_constraints: bool = False,
    gravity: Sequence[float] = URDF_GRAVITY,
    timestep: float = 1e-3,
    payloads: Iterable[Payload] = (),
    obstacles: Iterable[Obstacle] = (),
) -> Plant:
    """Compile a URDF string into an MjModel whose rigid-body dynamics equal the URDF's
    (except for the reported inertia adjustments).

    joint_damping: apply URDF <dynamics damping> as MuJoCo joint damping. Off gives
        exact rigid-body dynamics (what Pinocchio and rbd_control.dynamics compute).
    joint_friction: apply URDF <dynamics friction> as frictionloss; defaults to
        `joint_damping` so one switch turns all joint losses on or off.
    joint_limits: keep URDF position limits as MuJoCo joint ranges.
    mimic_constraints: keep <mimic> as equality constraints. Off by default, like the
        dynamics core and Pinocchio, which treat mimic joints as independent DoFs.
    payloads: extra masses the controller does not know about (robustness tests).
    obstacles: boxes in the world a sphere on a link can hit (contact tests).
    Raises ModelError (a ValueError) when the dynamics core refuses the URDF, and
    ValueError with MuJoCo's reason when MuJoCo cannot compile it.
    """
    if joint_friction is None:
        joint_friction = joint_damping
    checked = load_urdf(urdf_xml, gravity=gravity)
    if checked.nq > MAX_PLANT_JOINTS:
        raise ModelError(f"robot {checked.name!r} has {checked.nq} moving joints; the MuJoCo "
                         f"plant takes at most {MAX_PLANT_JOINTS} (its compile time grows about "
                         "cubically along a chain: 1.3 s at 500, minutes at 5000)")
    robot = _parse_robot(dynamics_elements(urdf_xml))
    weld_base_joints(robot)
    adjustments = make_inertias_acceptable(robot)
    _set_compiler(robot)
    spec = _spec_from_xml(ET.tostring(robot, encoding="unicode"))
    for payload in payloads:
        _attach_payload(spec, payload)
    for obstacle in obstacles:
        _add_obstacle(spec, obstacle)
    model = _compile(spec)
    losses = dict(zip(checked.joint_names, zip(checked.damping, checked.friction)))
    _apply_losses(model, losses, damping=joint_damping, friction=joint_friction)
    if not joint_limits:
        model.jnt_limited[:] = 0
    if not mimic_constraints:
        model.eq_active0[:] = 0
    model.opt.gravity[:] = np.asarray(gravity, dtype=float)
    model.opt.timestep = float(timestep)
    return Plant(model, adjustments, checked.warnings)


def joint_index(model: mujoco.MjModel, names: Sequence[str] | None = None) -> JointIndex:
    """Name -> address index for 1-DoF (hinge/slide) joints.

    names=None indexes every 1-DoF joint in MuJoCo's order. Unknown names and
    multi-DoF joints raise KeyError / ValueError naming the joint.
    """
    if names is None:
        names = [
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
            for j in range(model.njnt)
            if int(model.jnt_type[j]) in _ONE_DOF
        ]
    qpos_adr, dof_adr = [], []
    for name in names:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if jid < 0:
            raise KeyError(f"joint {name!r} is not in the MuJoCo model")
        if int(model.jnt_type[jid]) not in _ONE_DOF:
            raise ValueError(f"joint {name!r} is not a 1-DoF joint")
        qpos_adr.append(model.jnt_qposadr[jid])
        dof_adr.append(model.jnt_dofadr[jid])
    return JointIndex(JointMap(names, qpos_adr, model.nq), JointMap(names, dof_adr, model.nv))


def full_mass_matrix(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Dense nv x nv joint-space inertia H(q) for the state in `data` (MuJoCo's order).

    Runs mj_forward's position stage itself. Hides the mj_fullM signature change
    between MuJoCo 3 (m, dst, qM) and MuJoCo 4 (m, d, dst).
    """
    mujoco.mj_fwdPosition(model, data)
    full = np.zeros((model.nv, model.nv))
    if hasattr(data, "qM"):
        mujoco.mj_fullM(model, full, data.qM)
    else:
        mujoco.mj_fullM(model, data, full)
    return full


# --- helpers -----------------------------------------------------------------


def _parse_robot(urdf_xml: str) -> ET.Element:
    try:
        robot = ET.fromstring(urdf_xml)
    except ET.ParseError as exc:
        raise ValueError(f"robot_description is not valid XML: {exc}") from exc
    if robot.tag != "robot":
        raise ValueError(f"robot_description root element is <{robot.tag}>, expected <robot>")
    return robot


def _set_compiler(robot: ET.Element) -> None:
    extension = ET.SubElement(robot, "mujoco")
    ET.SubElement(extension, "compiler", _COMPILER_ATTRS)


def _spec_from_xml(xml: str) -> mujoco.MjSpec:
    try:
        return mujoco.MjSpec.from_string(xml)
    except Exception as exc:  # MuJoCo raises a plain ValueError/Exception with its reason
        raise ValueError(f"MuJoCo cannot parse the URDF: {exc}") from exc


def _compile(spec: mujoco.MjSpec) -> mujoco.MjModel:
    try:
        return spec.compile()
    except Exception as exc:
        raise ValueError(f"MuJoCo cannot compile the URDF: {exc}") from exc


def _attach_payload(spec: mujoco.MjSpec, payload: Payload) -> None:
    parent = spec.body(payload.link)
    if parent is None:
        raise KeyError(f"payload link {payload.link!r} is not a body in the model")
    body = parent.add_body(name=f"payload_{payload.link}_{len(spec.bodies)}")
    body.pos = list(map(float, payload.com))
    body.ipos = [0.0, 0.0, 0.0]   # the mass centre is the body origin (MuJoCo 4 would copy pos)
    body.iquat = [1.0, 0.0, 0.0, 0.0]
    body.mass = float(payload.mass)
    body.inertia = list(map(float, payload.inertia))
    body.explicitinertial = True


def _add_obstacle(spec: mujoco.MjSpec, obstacle: Obstacle) -> None:
    link = spec.body(obstacle.probe_link)
    if link is None:
        raise KeyError(f"obstacle probe link {obstacle.probe_link!r} is not a body in the model")
    values = [*obstacle.centre, *obstacle.half_size, obstacle.probe_radius]
    if len(values) != 7 or not all(np.isfinite(values)) or min(values[3:]) <= 0:
        raise ValueError(f"obstacle needs a finite centre (3), positive half sizes (3) and "
                         f"probe radius, got {obstacle}")
    link.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[obstacle.probe_radius, 0, 0],
                  mass=0.0, contype=1, conaffinity=1)
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX,
                            size=list(map(float, obstacle.half_size)),
                            pos=list(map(float, obstacle.centre)), contype=1, conaffinity=1)


def _apply_losses(
    model: mujoco.MjModel,
    losses: Mapping[str, tuple[float, float]],
    *,
    damping: bool,
    friction: bool,
) -> None:
    model.dof_damping[:] = 0.0
    model.dof_frictionloss[:] = 0.0
    for name, (d, f) in losses.items():
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if jid < 0 or int(model.jnt_type[jid]) not in _ONE_DOF:
            continue  # fixed joints have no dof
        dof = model.jnt_dofadr[jid]
        if damping:
            model.dof_damping[dof] = d
        if friction:
            model.dof_frictionloss[dof] = f
