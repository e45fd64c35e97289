"""Make the inertias real URDFs ship acceptable to MuJoCo, and say which links changed.

The dynamics core uses inertias as written (a broken triangle inequality or a massless link is
computable, and Pinocchio agrees). MuJoCo's compiler refuses them: a principal moment must be
positive, the moments must satisfy A + B >= C, and a body with a joint must have positive mass
and inertia. Its own fixes (compiler balanceinertia, boundmass, boundinertia) apply silently;
here the same kind of fix is made per link on the URDF's <inertial>, so every change is known:

- principal moments below MIN_INERTIA are raised to it (rods, rounding noise; an all-zero
  tensor, a point mass, is accepted by MuJoCo and kept unless its link is on a moving joint);
- if the largest moment C exceeds A + B, the two smaller ones are each raised by half the
  excess, keeping C (the smallest change restoring A + B >= C; balanceinertia would instead
  replace all three by their mean);
- a link on a moving joint with mass below MIN_MASS gets MIN_MASS at its <inertial> origin.

Mass and centre of mass are never changed otherwise, so gravity torques of the plant equal the
URDF's except for MIN_MASS on massless moving links.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

MIN_MASS = 1e-6          # kg: a thousandth of a gram, far below any real link
MIN_INERTIA = 1e-12      # kg m^2: a milligram at a millimetre
_NAMES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def make_inertias_acceptable(robot: ET.Element) -> tuple:
    """Edit robot's <link><inertial> in place; returns one string per changed link."""
    moving = {joint.find("child").get("link") for joint in robot.findall("joint")
              if joint.get("type") in ("revolute", "continuous", "prismatic")
              and joint.find("child") is not None}
    report = []
    for link in robot.findall("link"):
        change = _fix_link(link, link.get("name") in moving)
        if change:
            report.append(f"link {link.get('name')!r}: {change}")
    return tuple(report)


def _fix_link(link: ET.Element, moving: bool) -> str:
    inertial = link.find("inertial")
    if inertial is None:
        if not moving:
            return ""
        inertial = ET.SubElement(link, "inertial")
    mass_element = inertial.find("mass")
    if mass_element is None:
        mass_element = ET.SubElement(inertial, "mass", value="0")
    mass = float(mass_element.get("value", 0.0))
    I = _tensor(inertial)
    changes = []
    if moving and mass < MIN_MASS:
        mass_element.set("value", repr(MIN_MASS))
        changes.append(f"mass {mass!r} raised to {MIN_MASS!r} kg (a moving body needs mass)")
    elif not moving and not np.any(I):
        return ""    # a point mass welded to its parent: MuJoCo takes it as it is
    moments, axes = np.linalg.eigh(I)
    balanced = _balanced(moments)
    if np.any(balanced != moments):
        _write_tensor(inertial, axes @ np.diag(balanced) @ axes.T)
        changes.append(f"principal moments {moments.tolist()} -> {balanced.tolist()} kg m^2 "
                       "(MuJoCo needs positive moments with A + B >= C)")
    return "; ".join(changes)


def _balanced(moments: np.ndarray) -> np.ndarray:
    """Ascending principal moments A <= B <= C, floored and made to satisfy A + B >= C."""
    out = np.maximum(moments, MIN_INERTIA)
    excess = out[2] - out[0] - out[1]
    if excess > 0:
        # a relative margin so that rounding in R diag R^T cannot break A + B >= C again
        raise_by = 0.5 * excess + 1e-9 * out[2]
        out[0] += raise_by
        out[1] += raise_by
    return out


def _tensor(inertial: ET.Element) -> np.ndarray:
    element = inertial.find("inertia")
    v = {name: 0.0 if element is None else float(element.get(name, 0.0)) for name in _NAMES}
    return np.array([[v["ixx"], v["ixy"], v["ixz"]],
                     [v["ixy"], v["iyy"], v["iyz"]],
                     [v["ixz"], v["iyz"], v["izz"]]])


def _write_tensor(inertial: ET.Element, I: np.ndarray) -> None:
    element = inertial.find("inertia")
    if element is None:
        element = ET.SubElement(inertial, "inertia")
    for name, (r, c) in zip(_NAMES, [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]):
        element.set(name, repr(float(I[r, c])))
