"""A robot that is not its URDF: the default arm with its inertial parameters off, joint
friction and a payload, for the demo's identification phase and the identification tests.

    perturbed_urdf(xml)   every link's mass and centre of mass scaled by up to +-25 %, and
                          TRUE_FRICTION as <dynamics damping friction> on every joint
    TRUE_PAYLOAD          1.5 kg on the flange (a sim.Payload: the simulator adds it)
    HOLD_POSE             where gravity compensation is judged (leaning out: gravity errors
                          beat friction)
    validation_waypoints  the trajectory feedforward_pd tracking is judged on

It lives beside the demo, not in rbd_control.identification, because it is a stand-in for a
real robot built on the MuJoCo simulator's Payload: identification itself needs no MuJoCo.
"""
from __future__ import annotations

import re

import numpy as np

from rbd_control.sim.plant import Payload

PLANT_SEED = 7
# true joint friction of the plant: (viscous N m s/rad, Coulomb N m)
TRUE_FRICTION = {
    "shoulder_pan": (2.0, 3.0), "shoulder_lift": (2.5, 4.0), "elbow": (1.2, 2.0),
    "wrist_1": (0.4, 0.8), "wrist_2": (0.3, 0.6), "wrist_3": (0.15, 0.3),
}
TRUE_PAYLOAD = Payload("tool0", 1.5, com=(0.01, -0.02, 0.06), inertia=(4e-3, 3e-3, 2e-3))

HOLD_POSE = (0.0, 1.2, 0.3, 0.3, 0.4, 0.0)
WAYPOINTS = np.array([
    [0.0, 0.6, -0.9, 0.4, 0.3, 0.0],
    [0.9, 1.1, 0.2, -0.8, 0.7, 1.5],
    [-0.7, -0.4, 1.2, 0.9, -0.9, -1.2],
    [0.2, 0.8, -1.1, 0.3, 0.5, 0.4],
])
SEGMENT_TIME = 1.5   # s between waypoints
SETTLE_TIME = 0.5    # s after the last waypoint that still counts for the tracking error


def perturbed_urdf(xml: str, seed: int = PLANT_SEED) -> str:
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


def true_friction_parameters() -> dict:
    """TRUE_FRICTION as the controller's friction parameters ({joint: {viscous, coulomb}})."""
    return {j: {"viscous": b, "coulomb": c} for j, (b, c) in TRUE_FRICTION.items()}


def validation_waypoints():
    """(times from the first waypoint, positions, velocities): rest at both ends, central
    differences at the via points."""
    velocities = np.zeros_like(WAYPOINTS)
    velocities[1:-1] = (WAYPOINTS[2:] - WAYPOINTS[:-2]) / (2 * SEGMENT_TIME)
    return np.arange(len(WAYPOINTS)) * SEGMENT_TIME, WAYPOINTS, velocities
