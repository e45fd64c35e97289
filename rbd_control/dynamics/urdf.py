"""URDF text -> :class:`Model`: safe parsing (urdf_xml), validation (urdf_checks), and merging
of fixed joints.

The tree walk is iterative (a 5000-link chain loads). What cannot be computed is refused with a
ModelError naming the element; what is physically dubious loads, listed in Model.warnings, unless
strict=True.
"""
from __future__ import annotations

import math
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from rbd_control.dynamics.errors import ModelError
from rbd_control.dynamics.model import (AXIS, BODY_ROWS, COM_MOMENT, IBAR, MASS, PRISMATIC,
                                        REVOLUTE, XTREE_E, XTREE_R, Model)
from rbd_control.dynamics.model import checked_gravity
from rbd_control.dynamics.urdf_checks import (finite_number, inertia_warnings, joint_properties,
                                              mass_warnings)
from rbd_control.dynamics.urdf_xml import dynamics_elements, parse_with_urdf_parser_py

MOVING_JOINTS = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
BASE_JOINTS = ("floating", "planar")    # welded when they hang from the base, refused elsewhere
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


def load_urdf(xml: str | bytes, gravity=DEFAULT_GRAVITY, strict: bool = False) -> Model:
    """Build a Model from URDF text. Raises ModelError naming the culprit element.

    strict=True also refuses what otherwise loads with Model.warnings (broken inertia triangle
    inequalities, massless moving subtrees, a singular H, a floating base joint, odd limits)."""
    g = checked_gravity(gravity)
    robot = parse_with_urdf_parser_py(dynamics_elements(xml))
    model = _ModelBuilder(robot).build(g)
    if strict and model.warnings:
        more = len(model.warnings) - 5
        raise ModelError(f"robot {model.name!r} refused in strict mode: "
                         + "; ".join(model.warnings[:5])
                         + (f"; and {more} more" if more > 0 else ""))
    return model


def load_urdf_file(path, gravity=DEFAULT_GRAVITY, strict: bool = False) -> Model:
    """Build a Model from a URDF file on disk."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise ModelError(f"cannot read URDF file {path!s}: {error.strerror}") from error
    return load_urdf(data, gravity, strict)


def rpy_matrix(rpy) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _triple(values, what: str) -> np.ndarray:
    if values is None:
        return np.zeros(3)
    if len(values) != 3:
        raise ModelError(f"{what} must have 3 values, got {values!r}")
    return np.array([finite_number(v, what) for v in values])


def _pose(origin, what: str):
    """(R, t) of an <origin>, identity when absent."""
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = _triple(origin.xyz, f"{what} <origin xyz>")
    rpy = _triple(origin.rpy, f"{what} <origin rpy>")
    return rpy_matrix(rpy), xyz


class _ModelBuilder:
    """Walks the link tree depth-first, one body per moving joint, welding fixed joints."""

    def __init__(self, robot):
        self.robot = robot
        self.links = {}
        for link in robot.links:
            if link.name in self.links:
                raise ModelError(f"link {link.name!r} is defined twice")
            self.links[link.name] = link
        seen = set()
        for joint in robot.joints:
            if joint.name in seen:
                raise ModelError(f"joint {joint.name!r} is defined twice; joint names must be "
                                 "unique (states and commands are matched by name)")
            seen.add(joint.name)
        self.children = {name: [] for name in self.links}
        self.parent_joint = {}
        for joint in robot.joints:
            self._attach(joint)
        self.root = self._find_root()
        self.rows = []          # per body: (parent, type, bodies block)
        self.joints = []        # per body: the URDF joint
        self.link_body = {}
        self.link_placement = {}
        self.warnings = []

    def _attach(self, joint):
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in self.links:
                raise ModelError(f"joint {joint.name!r} names unknown {role} link {link!r}")
        if joint.child in self.parent_joint:
            raise ModelError(f"link {joint.child!r} is the child of two joints, "
                             f"{self.parent_joint[joint.child].name!r} and {joint.name!r}")
        self.parent_joint[joint.child] = joint
        self.children[joint.parent].append(joint)

    def _find_root(self) -> str:
        roots = [name for name in self.links if name not in self.parent_joint]
        if len(roots) > 1:
            raise ModelError(f"URDF has several root links {roots[:20]}; a robot is one tree")
        if not roots:
            raise ModelError(f"URDF has no root link: joints "
                             f"{[j.name for j in self.robot.joints][:20]} form a cycle through "
                             f"links {list(self.links)[:20]}")
        reached, stack = set(), [roots[0]]
        while stack:
            name = stack.pop()
            reached.add(name)
            stack.extend(joint.child for joint in self.children[name])
        unreached = [name for name in self.links if name not in reached]
        if unreached:
            raise ModelError(f"links {unreached[:20]} are not connected to root {roots[0]!r}: "
                             "their joints form a cycle")
        return roots[0]

    def build(self, gravity) -> Model:
        self._walk()
        if not self.rows:
            raise ModelError(f"robot {self.robot.name!r} has no moving joint "
                             "(revolute, continuous or prismatic)")
        topology = np.array([(parent, jtype) for parent, jtype, _ in self.rows], dtype=np.int64)
        bodies = np.ascontiguousarray(np.stack([block for _, _, block in self.rows]))
        properties, limit_warnings = joint_properties(self.joints)
        model = Model(name=self.robot.name or "", joint_names=tuple(j.name for j in self.joints),
                      link_names=tuple(link.name for link in self.robot.links),
                      topology=topology, bodies=bodies, gravity=gravity.copy(),
                      link_body=MappingProxyType(dict(self.link_body)),
                      link_placement=MappingProxyType(dict(self.link_placement)), **properties)
        found = self.warnings + limit_warnings + mass_warnings(model, self.joints)
        return replace(model, warnings=tuple(found)) if found else model

    def _walk(self):
        """Depth-first, children in document order, so that parent[i] < i; an explicit stack
        (not recursion) so that any chain length loads."""
        self._place(self.root, -1, np.eye(3), np.zeros(3))
        stack = [(joint, -1, np.eye(3), np.zeros(3))
                 for joint in reversed(self.children[self.root])]
        while stack:
            joint, body, R, t = stack.pop()
            R_origin, t_origin = _pose(joint.origin, f"joint {joint.name!r}")
            R_joint, t_joint = R @ R_origin, t + R @ t_origin
            if self._is_welded(joint, body):
                child, R_child, t_child = body, R_joint, t_joint
            else:
                child = self._new_body(joint, body, R_joint, t_joint)
                R_child, t_child = np.eye(3), np.zeros(3)
            self._place(joint.child, child, R_child, t_child)
            stack.extend((grandchild, child, R_child, t_child)
                         for grandchild in reversed(self.children[joint.child]))

    def _is_welded(self, joint, body) -> bool:
        """Fixed joints weld; so does a floating or planar joint hanging from the fixed base
        (a mobile base, a humanoid's pelvis): the tree is controlled relative to its base."""
        if joint.type in BASE_JOINTS and body < 0:
            self.warnings.append(
                f"joint {joint.name!r} is {joint.type} from the base: treated as fixed (the "
                "robot is controlled relative to its base; set gravity for a tilted base)")
            return True
        return joint.type == "fixed"

    def _place(self, link_name, body, R, t):
        """Give link_name to `body`, where its frame sits at (R, t) in body coordinates."""
        self.link_body[link_name] = body
        self.link_placement[link_name] = (R.T.copy(), t.copy())
        if body >= 0:
            self.warnings += _add_link_inertia(self.rows[body][2], self.links[link_name], R, t)

    def _new_body(self, joint, parent, R_joint, t_joint) -> int:
        if joint.type in BASE_JOINTS:
            raise ModelError(f"joint {joint.name!r} is {joint.type} but not attached to the base: "
                             "only revolute, continuous, prismatic and fixed joints are supported "
                             "inside the tree")
        if joint.type not in MOVING_JOINTS:
            raise ModelError(f"joint {joint.name!r} has unknown type {joint.type!r}")
        block = np.zeros((BODY_ROWS, 3))
        block[XTREE_E:XTREE_E + 3] = R_joint.T      # coordinates parent -> joint frame
        block[XTREE_R] = t_joint
        block[AXIS] = _unit_axis(joint)
        self.rows.append((parent, MOVING_JOINTS[joint.type], block))
        self.joints.append(joint)
        return len(self.rows) - 1


def _unit_axis(joint) -> np.ndarray:
    axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else _triple(
        joint.axis, f"joint {joint.name!r} <axis xyz>")
    norm = np.linalg.norm(axis)
    if norm < 1e-12:
        raise ModelError(f"joint {joint.name!r} has a zero <axis xyz={joint.axis}>")
    return axis / norm


def _add_link_inertia(block, link, R, t) -> list:
    """Add link's spatial inertia, transformed into body coordinates, to the body's block;
    returns the warnings about it."""
    inertial = link.inertial
    if inertial is None:
        return []  # urdf_parser_py: no <inertial> means a massless link (checked per subtree)
    m = finite_number(inertial.mass if inertial.mass is not None else 0.0,
                      f"link {link.name!r} <mass>")
    if m < 0:
        raise ModelError(f"link {link.name!r} has negative mass {inertial.mass!r}")
    I_c = _inertia_tensor(link)
    found = inertia_warnings(link.name, I_c)
    R_com, c_link = _pose(inertial.origin, f"link {link.name!r} <inertial>")
    R_body = R @ R_com                       # COM frame orientation in body coordinates
    c = R @ c_link + t                       # centre of mass in body coordinates
    I_c_body = R_body @ I_c @ R_body.T       # the pitfall: <inertial><origin rpy> rotates I
    block[MASS, 0] += m
    block[COM_MOMENT] += m * c
    # parallel-axis theorem: inertia about the body origin
    block[IBAR:IBAR + 3] += I_c_body + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return found


def _inertia_tensor(link) -> np.ndarray:
    inertia = link.inertial.inertia
    if inertia is None:
        return np.zeros((3, 3))
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    ixx, ixy, ixz, iyy, iyz, izz = (
        finite_number(0.0 if getattr(inertia, n) is None else getattr(inertia, n),
                      f"link {link.name!r} <inertia {n}>") for n in names)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
