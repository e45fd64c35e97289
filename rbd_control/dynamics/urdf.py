"""URDF text -> :class:`Model`: safe parsing, validation, and merging of fixed joints.

robot_description arrives over the network, so the text is first read by a bare expat pass that
refuses any DOCTYPE (no external entities, no entity bombs) and reports where XML is malformed;
only then does urdf_parser_py read it. Every rejection is a ModelError naming the element.
"""
from __future__ import annotations

import math
import xml.parsers.expat
from xml.etree import ElementTree
from contextlib import contextmanager
from types import MappingProxyType

import numpy as np

from .api import crba
from .errors import ModelError
from .ltdl import ltdl
from .model import (AXIS, BODY_ROWS, COM_MOMENT, IBAR, MASS, PRISMATIC, REVOLUTE, XTREE_E,
                    XTREE_R, Model)

MOVING_JOINTS = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
UNSUPPORTED_JOINTS = ("floating", "planar")
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


def load_urdf(xml: str | bytes, gravity=DEFAULT_GRAVITY) -> Model:
    """Build a Model from URDF text. Raises ModelError naming the culprit element."""
    text = _as_text(xml)
    _check_xml_is_safe(text)
    robot = _parse_with_urdf_parser_py(_dynamics_elements(text))
    return _ModelBuilder(robot).build(np.asarray(gravity, dtype=np.float64))


def load_urdf_file(path, gravity=DEFAULT_GRAVITY) -> Model:
    """Build a Model from a URDF file on disk."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise ModelError(f"cannot read URDF file {path!s}: {error.strerror}") from error
    return load_urdf(data, gravity)


def _as_text(xml) -> str:
    if isinstance(xml, bytes):
        try:
            return xml.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ModelError(f"robot description is not UTF-8: {error}") from error
    if not isinstance(xml, str):
        raise ModelError(f"robot description must be a string, got {type(xml).__name__}")
    if not xml.strip():
        raise ModelError("robot description is empty")
    return xml


def _check_xml_is_safe(text: str) -> None:
    """Reject DOCTYPEs (where entities live) and report malformed XML with its position."""
    parser = xml.parsers.expat.ParserCreate()

    def refuse_doctype(name, *_):
        raise ModelError(f"robot description declares a DOCTYPE ({name!r}); DTDs and entities "
                         "are refused because the text may come from the network")

    parser.StartDoctypeDeclHandler = refuse_doctype
    parser.EntityDeclHandler = refuse_doctype
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as error:
        raise ModelError(f"robot description is not well-formed XML: {error}") from error


def _dynamics_elements(text: str) -> str:
    """Only what dynamics reads: links with their <inertial>, and joints.

    Real URDFs carry visuals, materials, transmissions and simulator tags that urdf_parser_py
    rejects or complains about (a texture without filename, an old-style transmission) although
    they say nothing about dynamics; they are dropped before it sees them. A robot without a
    name gets one. The text was already checked by expat, so ElementTree is safe here.
    """
    root = ElementTree.fromstring(text)
    if root.tag != "robot":
        raise ModelError(f"robot description's root element is <{root.tag}>, not <robot>")
    kept = ElementTree.Element("robot", name=root.get("name") or "robot")
    for element in root:
        if element.tag == "link":
            link = ElementTree.SubElement(kept, "link", dict(element.attrib))
            link.extend(child for child in element if child.tag == "inertial")
        elif element.tag == "joint":
            kept.append(element)
    return ElementTree.tostring(kept, encoding="unicode")


@contextmanager
def _collect_parser_complaints(sink):
    # urdf_parser_py reports unknown tags (gazebo, ros2_control, transmission) through a
    # module-level hook that prints to stderr; collect them instead of spamming the console.
    from urdf_parser_py.xml_reflection import core
    previous, core.on_error = core.on_error, sink.append
    try:
        yield
    finally:
        core.on_error = previous


def _parse_with_urdf_parser_py(text: str):
    from urdf_parser_py.urdf import URDF
    complaints = []
    with _collect_parser_complaints(complaints):
        try:
            robot = URDF.from_xml_string(text)
        except Exception as error:  # urdf_parser_py raises bare Exception/AssertionError types
            raise ModelError(f"invalid URDF: {error}") from error
    if not robot.links:
        raise ModelError("URDF has no <link> elements")
    return robot


def rpy_matrix(rpy) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _pose(origin, what: str):
    """(R, t) of an <origin>, identity when absent."""
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = np.zeros(3) if origin.xyz is None else np.asarray(origin.xyz, dtype=np.float64)
    rpy = np.zeros(3) if origin.rpy is None else np.asarray(origin.rpy, dtype=np.float64)
    if xyz.shape != (3,) or rpy.shape != (3,) or not np.all(np.isfinite(np.r_[xyz, rpy])):
        raise ModelError(f"{what}: <origin> must have 3 finite xyz and rpy values")
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
        self.children = {name: [] for name in self.links}
        self.parent_joint = {}
        for joint in robot.joints:
            self._attach(joint)
        self.root = self._find_root()
        self.rows = []          # per body: (parent, type, bodies block)
        self.joints = []        # per body: the URDF joint
        self.link_body = {}
        self.link_placement = {}

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
            raise ModelError(f"URDF has several root links {roots}; a robot is one tree")
        if not roots:
            raise ModelError(f"URDF has no root link: joints {[j.name for j in self.robot.joints]}"
                             f" form a cycle through links {list(self.links)}")
        reached, stack = set(), [roots[0]]
        while stack:
            name = stack.pop()
            reached.add(name)
            stack.extend(joint.child for joint in self.children[name])
        unreached = [name for name in self.links if name not in reached]
        if unreached:
            raise ModelError(f"links {unreached} are not connected to root {roots[0]!r}: "
                             "their joints form a cycle")
        return roots[0]

    def build(self, gravity) -> Model:
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ModelError(f"gravity must be 3 finite numbers, got {gravity!r}")
        self._visit(self.root, body=-1, R=np.eye(3), t=np.zeros(3))
        if not self.rows:
            raise ModelError(f"robot {self.robot.name!r} has no moving joint "
                             "(revolute, continuous or prismatic)")
        topology = np.array([(parent, jtype) for parent, jtype, _ in self.rows], dtype=np.int64)
        bodies = np.ascontiguousarray(np.stack([block for _, _, block in self.rows]))
        _check_subtrees_have_mass(topology, bodies, self.joints)
        model = Model(name=self.robot.name or "", joint_names=tuple(j.name for j in self.joints),
                      link_names=tuple(link.name for link in self.robot.links),
                      topology=topology, bodies=bodies, gravity=gravity.copy(),
                      link_body=MappingProxyType(dict(self.link_body)),
                      link_placement=MappingProxyType(dict(self.link_placement)),
                      **_joint_properties(self.joints))
        _check_mass_matrix_is_regular(model, self.joints)
        return model

    def _visit(self, link_name, body, R, t):
        """Give link_name to `body`, where its frame sits at (R, t) in body coordinates."""
        self.link_body[link_name] = body
        self.link_placement[link_name] = (R.T.copy(), t.copy())
        if body >= 0:
            _add_link_inertia(self.rows[body][2], self.links[link_name], R, t)
        for joint in self.children[link_name]:
            R_origin, t_origin = _pose(joint.origin, f"joint {joint.name!r}")
            R_joint, t_joint = R @ R_origin, t + R @ t_origin
            if joint.type == "fixed":
                self._visit(joint.child, body, R_joint, t_joint)
            else:
                child_body = self._new_body(joint, body, R_joint, t_joint)
                self._visit(joint.child, child_body, np.eye(3), np.zeros(3))

    def _new_body(self, joint, parent, R_joint, t_joint) -> int:
        if joint.type in UNSUPPORTED_JOINTS:
            raise ModelError(f"joint {joint.name!r} is {joint.type}: only revolute, continuous, "
                             "prismatic and fixed joints are supported (fixed-base arms)")
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
    axis = np.array([1.0, 0.0, 0.0] if joint.axis is None else joint.axis, dtype=np.float64)
    norm = np.linalg.norm(axis) if axis.shape == (3,) else 0.0
    if not np.isfinite(norm) or norm < 1e-12:
        raise ModelError(f"joint {joint.name!r} has a zero or invalid <axis xyz={joint.axis}>")
    return axis / norm


def _add_link_inertia(block, link, R, t):
    """Add link's spatial inertia, transformed into body coordinates, to the body's block."""
    inertial = link.inertial
    if inertial is None:
        return  # urdf_parser_py: no <inertial> means a massless link (checked per subtree)
    m = float(inertial.mass if inertial.mass is not None else 0.0)
    I_c = _inertia_tensor(link)
    if not math.isfinite(m) or m < 0:
        raise ModelError(f"link {link.name!r} has invalid mass {inertial.mass!r} (must be >= 0)")
    _check_inertia(link.name, m, I_c)
    R_com, c_link = _pose(inertial.origin, f"link {link.name!r} <inertial>")
    R_body = R @ R_com                       # COM frame orientation in body coordinates
    c = R @ c_link + t                       # centre of mass in body coordinates
    I_c_body = R_body @ I_c @ R_body.T       # the pitfall: <inertial><origin rpy> rotates I
    block[MASS, 0] += m
    block[COM_MOMENT] += m * c
    # parallel-axis theorem: inertia about the body origin
    block[IBAR:IBAR + 3] += I_c_body + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))


def _inertia_tensor(link) -> np.ndarray:
    inertia = link.inertial.inertia
    if inertia is None:
        return np.zeros((3, 3))
    values = [inertia.ixx, inertia.ixy, inertia.ixz, inertia.iyy, inertia.iyz, inertia.izz]
    values = [0.0 if v is None else float(v) for v in values]
    if not all(math.isfinite(v) for v in values):
        raise ModelError(f"link {link.name!r} has a non-finite <inertia>")
    ixx, ixy, ixz, iyy, iyz, izz = values
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _check_inertia(link_name, m, I_c):
    """Principal moments must be >= 0 and obey the triangle inequality.

    Degenerate tensors are physical limits and real robots use them: a point mass (all zero;
    baxter, talos, tiago) or a thin rod (one zero moment; hyq, finger_edu). Whether H stays
    regular with them (a point mass on its own joint's axis would not) is checked on H itself.
    """
    moments = np.linalg.eigvalsh(I_c)
    # relative to the tensor, with a floor far below any real link (1e-12 kg m^2)
    tolerance = max(1e-9 * float(np.max(np.abs(moments))), 1e-12)
    if moments[0] < -tolerance:
        raise ModelError(f"link {link_name!r}: <inertia> is not positive definite: a principal "
                         f"moment is negative (principal moments {moments.tolist()})")
    if moments[2] > moments[0] + moments[1] + tolerance:
        raise ModelError(f"link {link_name!r}: <inertia> breaks the triangle inequality "
                         f"(principal moments {moments.tolist()}: the largest exceeds the sum "
                         "of the other two)")


def _check_subtrees_have_mass(topology, bodies, joints):
    """A moving joint whose whole subtree is massless would make H singular."""
    subtree_mass = bodies[:, MASS, 0].copy()
    for i in range(len(joints) - 1, -1, -1):
        if subtree_mass[i] <= 0:
            raise ModelError(f"joint {joints[i].name!r} moves link {joints[i].child!r} whose "
                             "subtree has no mass: the mass matrix H would be singular")
        if topology[i, 0] >= 0:
            subtree_mass[topology[i, 0]] += subtree_mass[i]


def _check_mass_matrix_is_regular(model, joints):
    """Factorise H at the zero pose: a non-positive pivot means the joint's subtree has no
    inertia about its axis (e.g. point masses on the axis), and forward dynamics would fail."""
    H = crba(model, np.zeros(model.nq))
    scale = max(float(np.max(np.abs(np.diag(H)))), 1e-300)
    pivot = ltdl(model._data.md, H)
    if pivot < 0:
        pivots = np.diag(H)
        pivot = int(np.argmin(pivots)) if np.min(pivots) <= 1e-12 * scale else -1
    if pivot >= 0:
        raise ModelError(f"joint {joints[pivot].name!r} moves a subtree with no inertia about its "
                         "axis (e.g. point masses on the axis): the mass matrix H is singular")


def _joint_properties(joints) -> dict:
    n = len(joints)
    effort, velocity = np.full(n, np.inf), np.full(n, np.inf)
    position = np.tile([-np.inf, np.inf], (n, 1))
    continuous = np.array([j.type == "continuous" for j in joints])
    damping, friction = np.zeros(n), np.zeros(n)
    for i, joint in enumerate(joints):
        limit = joint.limit
        if limit is not None:
            # A missing or non-positive effort/velocity is read as "not given": clamping every
            # command to zero would make the joint dead, which no author means.
            if limit.effort is not None and limit.effort > 0:
                effort[i] = limit.effort
            if limit.velocity is not None and limit.velocity > 0:
                velocity[i] = limit.velocity
            if (not continuous[i] and limit.lower is not None and limit.upper is not None
                    and limit.lower < limit.upper):
                position[i] = (limit.lower, limit.upper)
        if joint.dynamics is not None:
            damping[i] = joint.dynamics.damping or 0.0
            friction[i] = joint.dynamics.friction or 0.0
    return dict(effort_limit=effort, velocity_limit=velocity, position_limits=position,
                continuous=continuous, damping=damping, friction=friction)
