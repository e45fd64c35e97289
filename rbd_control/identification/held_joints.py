"""Joints of the URDF that a recording lacks (a gripper's fingers in an arm's log): held at a
value, i.e. welded there, so that the fit sees the arm the recording moved.

    parse_fixed(["NAME=VALUE", ...]) -> {joint: value}            (rbd_identify --fixed)
    held_positions(model, recorded, fixed, recorded_values) -> {joint: value}
    weld_joints(urdf_xml, {joint: value}) -> URDF text, those joints type="fixed"

A held joint becomes a fixed joint whose <origin> is the old origin composed with the joint's
motion at the value (a translation along the axis, or a rotation about it: Rodrigues' formula),
so the links beyond it sit where they sat at that value. Its child's inertia is then lumped into
the parent body's by the URDF loader, as for any fixed joint: the fit identifies the arm with
the hand and fingers as one rigid end.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.urdf import rpy_matrix

MOVING_TYPES = ("revolute", "continuous", "prismatic")


ENTRY = re.compile(r"^\s*([^=]*[^=\s])\s*=\s*(\S+)\s*$")      # NAME=VALUE, spaces allowed


def parse_fixed(entries) -> dict:
    """["NAME=VALUE", ...] -> {NAME: VALUE}; InputError naming the entry that is not one."""
    out = {}
    for entry in entries or []:
        match = ENTRY.match(str(entry))
        value = _finite(match.group(2)) if match else None
        if value is None:
            raise InputError(f"--fixed {entry!r} is not NAME=VALUE with a finite number")
        if match.group(1) in out:
            raise InputError(f"--fixed names {match.group(1)!r} twice")
        out[match.group(1)] = value
    return out


def _finite(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def held_positions(model, recorded, fixed=None, recorded_values=None) -> dict:
    """The model's joints the recording lacks, each with the value it is held at: `fixed`'s
    (--fixed), else `recorded_values`' (a joint a bag's other source recorded, e.g. a gripper),
    else 0 (the URDF zero). InputError where `fixed` names a joint the model does not have, or
    one the recording has (a recorded joint is fitted, not held)."""
    fixed, recorded_values = dict(fixed or {}), dict(recorded_values or {})
    unknown = sorted(set(fixed) - set(model.joint_names))
    if unknown:
        raise InputError(f"--fixed names {unknown}, not moving joints of robot {model.name!r} "
                         f"(its joints: {list(model.joint_names)})")
    both = sorted(set(fixed) & set(recorded))
    if both:
        raise InputError(f"--fixed names {both}, which the recording has: a recorded joint is "
                         "fitted, not held")
    return {j: fixed.get(j, recorded_values.get(j, 0.0))
            for j in model.joint_names if j not in recorded}


def describe(held, fixed=None, recorded_values=None) -> str:
    """One line: which joints are held, at what, and where each value comes from."""
    fixed, recorded_values = fixed or {}, recorded_values or {}

    def source(joint):
        if joint in fixed:
            return "--fixed"
        return "their recorded median" if joint in recorded_values else "URDF zero"
    parts = [f"{j} = {v:g} ({source(j)})" for j, v in held.items()]
    return "joints not in the recording, held (welded) at: " + ", ".join(parts)


def weld_joints(urdf_xml: str, positions: dict) -> str:
    """urdf_xml with each joint of `positions` made fixed at its value (its <axis>, <limit>,
    <dynamics>, <mimic>, <calibration> and <safety_controller> dropped)."""
    if not positions:
        return urdf_xml
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(urdf_xml, parser=parser)
    joints = {j.get("name"): j for j in root.findall("joint")}
    for name, value in positions.items():
        joint = joints.get(name)
        if joint is None or joint.get("type") not in MOVING_TYPES:
            raise InputError(f"cannot hold {name!r}: not a moving joint of the URDF")
        _weld(joint, float(value))
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _weld(joint, value):
    kind = joint.get("type")
    axis_element = joint.find("axis")
    axis = np.array([1.0, 0.0, 0.0]) if axis_element is None else np.array(
        [float(x) for x in axis_element.get("xyz", "1 0 0").split()])
    axis = axis / np.linalg.norm(axis)
    for tag in ("axis", "limit", "dynamics", "mimic", "calibration", "safety_controller"):
        for element in joint.findall(tag):
            joint.remove(element)
    joint.set("type", "fixed")
    if value == 0.0:
        return                      # the origin as written: nothing to compose
    origin = joint.find("origin")
    if origin is None:
        origin = ET.SubElement(joint, "origin")
    xyz = np.array([float(x) for x in origin.get("xyz", "0 0 0").split()])
    R = rpy_matrix([float(x) for x in origin.get("rpy", "0 0 0").split()])
    if kind == "prismatic":
        xyz = xyz + R @ (axis * value)          # child frame moved along the axis
    else:
        R = R @ _axis_rotation(axis, value)     # child frame turned about the axis
    origin.set("xyz", " ".join(f"{x:.17g}" for x in xyz))
    origin.set("rpy", " ".join(f"{x:.17g}" for x in _matrix_rpy(R)))


def _axis_rotation(axis, angle):
    """Rodrigues: I + sin(a) [k]x + (1 - cos(a)) [k]x^2 for the unit axis k."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def _matrix_rpy(R):
    """The inverse of rpy_matrix (R = Rz(yaw) Ry(pitch) Rx(roll)), pitch in [-pi/2, pi/2]."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if math.hypot(R[0, 0], R[1, 0]) < 1e-12:          # gimbal lock: roll absorbs the yaw
        return np.array([math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0])
    return np.array([math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])])
