"""What an identification returns: the identified model, friction and payload, how well they fit,
and the way out to a URDF and to the controller's parameters."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

import numpy as np

from rbd_control.dynamics import rnea_batch

from rbd_control.dynamics.inertial_parameters import to_rigid_body


@dataclass(frozen=True)
class Payload:
    """A rigid load on `link`: mass, centre of mass and inertia about it, in the link frame."""

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray       # 3x3 about the COM

    @classmethod
    def from_parameters(cls, link, pi_p):
        m, c, I_c = to_rigid_body(pi_p)
        return cls(link, float(m), c, I_c)


@dataclass(frozen=True)
class IdentificationResult:
    model: object              # the identified Model
    friction: object           # Friction, per joint in model.joint_names order
    payload: Payload | None    # only for a payload fit
    residual_rms: np.ndarray   # per joint, N m (N), on the (filtered) fit data
    condition_number: float    # of the weighted, column-scaled stacked base regressor
    base: object               # BaseParameters of the model

    def with_residual(self, rms):
        return replace(self, residual_rms=np.asarray(rms, dtype=float))

    def predict(self, q, qd, qdd) -> np.ndarray:
        """tau = rnea(identified model) + friction, for one state or (N, nq) batches."""
        single = np.ndim(q) == 1
        Q, QD, QDD = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
        tau = rnea_batch(self.model, Q, QD, QDD) + self.friction.torque(QD)
        return tau[0] if single else tau

    def to_urdf(self, original_xml: str) -> str:
        """original_xml with the <inertial> of each moving body's link replaced by the
        identified one. Links welded to a body through fixed joints have their inertia lumped
        into that body's link (their <inertial> is removed); everything else is kept."""
        return rewrite_inertials(original_xml, self.model)

    def friction_yaml(self, node_name="/**/rbd_controller") -> str:
        """The controller node's parameter file: friction.<joint>.viscous / .coulomb, for
        rbd_controller in any namespace."""
        lines = [f"{node_name}:", "  ros__parameters:",
                 f"    friction.epsilon: {self.friction.epsilon!r}"]
        for joint, values in self.friction.as_dict().items():
            lines += [f"    friction.{joint}.viscous: {values['viscous']!r}",
                      f"    friction.{joint}.coulomb: {values['coulomb']!r}"]
        return "\n".join(lines) + "\n"


def relative_rms(measured, predicted) -> np.ndarray:
    """Per joint: RMS(predicted - measured) / RMS(measured)."""
    measured, predicted = np.asarray(measured), np.asarray(predicted)
    return (np.sqrt(np.mean(np.square(predicted - measured), axis=0))
            / np.maximum(np.sqrt(np.mean(np.square(measured), axis=0)), 1e-300))


CONFIDENCE_BLOCKS = 5


def worst_block_relative_rms(measured, predicted, blocks=CONFIDENCE_BLOCKS) -> np.ndarray:
    """Per joint, the largest relative_rms over `blocks` consecutive blocks of the samples:
    the confidence figure of a joint's model. One number over all held-back samples can hide
    a stretch the model predicts badly (a pose where the joint's torque is small, or a
    parameter the excitation hardly moved); the worst block says how far each joint's model
    can be trusted on data the fit never saw."""
    measured, predicted = np.asarray(measured), np.asarray(predicted)
    parts = [k for k in np.array_split(np.arange(len(measured)), blocks) if k.size]
    return np.max([relative_rms(measured[k], predicted[k]) for k in parts], axis=0)


def sliding_relative_rms(measured, predicted, qd, epsilon) -> np.ndarray:
    """relative_rms per joint over the samples where that joint slides (|qd| >= 5 epsilon); in
    stick the friction torque is anything within +-f_c, which no friction law predicts."""
    sliding = np.abs(qd) >= 5 * epsilon
    return np.array([relative_rms(measured[s, j], predicted[s, j]) if s.any() else np.nan
                     for j, s in enumerate(sliding.T)])


def rewrite_inertials(original_xml: str, model) -> str:
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(original_xml, parser=parser)
    links = {link.get("name"): link for link in root.findall("link")}
    own_link = {}
    for joint in root.findall("joint"):    # not <ros2_control>'s or <transmission>'s joints
        if joint.get("name") in model.joint_names:
            own_link[model.joint_names.index(joint.get("name"))] = joint.find("child").get("link")
    pi = model.inertial_parameters().reshape(model.nq, -1)
    for name, body in model.link_body.items():
        if body < 0 or name not in links:
            continue
        link = links[name]
        for old in link.findall("inertial"):
            link.remove(old)
        if name == own_link[body]:
            link.insert(0, _inertial_element(pi[body]))
    text = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0"?>\n' + text + "\n"


def _inertial_element(pi_i):
    m, c, I_c = to_rigid_body(pi_i) if pi_i[0] > 0 else (0.0, np.zeros(3), np.zeros((3, 3)))
    inertial = ET.Element("inertial")
    inertial.text, inertial.tail = "\n        ", "\n    "
    ET.SubElement(inertial, "origin", xyz=" ".join(f"{x:.10g}" for x in c), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=f"{m:.10g}")
    names = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
             "izz": (2, 2)}
    ET.SubElement(inertial, "inertia", {k: f"{I_c[r, s]:.10g}" for k, (r, s) in names.items()})
    for child in inertial:
        child.tail = "\n        "
    inertial[-1].tail = "\n      "
    return inertial
