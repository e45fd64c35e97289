"""What the URDF loader refuses and what it only warns about.

Refused (ModelError naming the element), because the dynamics cannot be computed from it:
non-finite numbers, numbers beyond MAX_MAGNITUDE, negative mass, an inertia no body can have
(a principal moment clearly below zero), and (model.checked_gravity) gravity beyond MAX_GRAVITY.

Warned about (one string per finding, naming the link or joint), because real robots ship it
and the dynamics stays computable: inertias breaking the triangle inequality (common in CAD
exports), slightly negative principal moments, moving subtrees without mass, a mass matrix H
that is singular at the zero pose, and limits that are missing, zero, absurd or swapped.
"""
from __future__ import annotations

import math

import numpy as np

from rbd_control.dynamics.api import crba
from rbd_control.dynamics.errors import ModelError
from rbd_control.dynamics.ltdl import ltdl
from rbd_control.dynamics.model import MASS

# Any number feeding the dynamics (origins, masses, inertias) must stay below this magnitude, so
# that products of three of them (m c c) stay far from overflow; no robot is 1e9 m or 1e9 kg.
MAX_MAGNITUDE = 1e9
# A negative principal moment within this fraction of the largest, or within ROUNDING_FLOOR
# kg m^2 (far below any real link), is rounding noise (hyq's feet: -2e-22 against 3e-6; icub's
# ankle: -1.4e-20 against 1.4e-20); up to SLIGHTLY_NEGATIVE of the largest it is a CAD export's
# error and warned about (romeo_laas_small's hip: -5 %); beyond, the tensor is no body's inertia.
ROUNDING = 1e-9
ROUNDING_FLOOR = 1e-12
SLIGHTLY_NEGATIVE = 0.1
# A pivot of H below this fraction of H's largest diagonal entry is treated as zero.
SINGULAR_PIVOT = 1e-12
FACTORISATION_WORK = 5e7     # ~0.05 s of the L^T D L loop


def finite_number(value, what: str, bound: float = MAX_MAGNITUDE) -> float:
    """value as a float, refused when non-finite or beyond `bound` in magnitude."""
    number = float(value)
    if not math.isfinite(number):
        raise ModelError(f"{what} is {value!r}: must be a finite number")
    if abs(number) > bound:
        raise ModelError(f"{what} is {value!r}: beyond +-{bound:g}, no robot has such a value")
    return number


def inertia_warnings(link_name: str, I_c: np.ndarray) -> list:
    """Principal moments: refuse a clearly negative one, warn about a slightly negative one or
    the triangle inequality. URDF gives six numbers, so the tensor is symmetric by construction;
    what makes it no body's inertia is a clearly negative principal moment, which is refused.

    Degenerate tensors are physical limits and real robots use them: a point mass (all zero)
    or a thin rod (one zero moment). Whether H stays regular with them is checked on H itself.
    """
    moments = np.linalg.eigvalsh(I_c)
    largest = float(np.max(np.abs(moments)))
    noise = max(ROUNDING * largest, ROUNDING_FLOOR)
    found = []
    if moments[0] < -max(SLIGHTLY_NEGATIVE * largest, noise):
        raise ModelError(f"link {link_name!r}: <inertia> is not positive semi-definite: a "
                         f"principal moment is negative (principal moments {moments.tolist()})")
    if moments[0] < -noise:
        found.append(f"link {link_name!r}: <inertia> has a slightly negative principal moment "
                     f"(principal moments {moments.tolist()}); used as written")
    if moments[2] > moments[0] + moments[1] + noise:
        found.append(f"link {link_name!r}: <inertia> breaks the triangle inequality (principal "
                     f"moments {moments.tolist()}: the largest exceeds the sum of the other "
                     "two); used as written")
    return found


def massless_subtrees(parent, bodies, joints) -> list:
    """Indices of moving joints whose whole subtree has no mass (H has a zero row there)."""
    subtree_mass = bodies[:, MASS, 0].copy()
    for i in range(len(joints) - 1, -1, -1):
        if parent[i] >= 0:
            subtree_mass[parent[i]] += subtree_mass[i]
    return [i for i in range(len(joints)) if not subtree_mass[i] > 0]


def singular_joints(model) -> list:
    """Joints at which the L^T D L factorisation of H(0) meets a zero pivot: no inertia about
    their axis. Each one found is decoupled (its row and column replaced by the identity's) and
    the factorisation repeated, so every such joint is named, not only the first.

    The factorisation costs sum(depth_i^2) (RBDA sec. 6.5); beyond FACTORISATION_WORK (long
    chains: a 2000-link chain would take seconds) only H's diagonal, the subtree's inertia
    about each axis, is checked, which finds massless subtrees and masses on the axis."""
    H0 = crba(model, np.zeros(model.nq))
    scale = max(float(np.max(np.abs(np.diag(H0)))), 1e-300)
    found = set(np.flatnonzero(np.diag(H0) <= SINGULAR_PIVOT * scale).tolist())
    if _factorisation_work(model.parent) > FACTORISATION_WORK:
        return sorted(found)
    while True:
        H = H0.copy()
        for k in found:
            H[k, :] = H[:, k] = 0.0
            H[k, k] = scale
        pivot = ltdl(model._data.md, H)
        if pivot < 0 and np.all(np.diag(H) > SINGULAR_PIVOT * scale):
            return sorted(found)
        if pivot < 0:
            pivot = int(np.argmin(np.diag(H)))
        found.add(int(pivot))


def _factorisation_work(parent) -> int:
    depth = np.zeros(len(parent), dtype=np.int64)
    for i, p in enumerate(parent):
        depth[i] = depth[p] + 1 if p >= 0 else 1
    return int(np.sum(depth.astype(np.float64) ** 2))


def mass_warnings(model, joints) -> list:
    massless = massless_subtrees(model.parent, model.bodies, joints)
    found = [f"joint {joints[i].name!r} moves link {joints[i].child!r} whose subtree has no mass: "
             "H is singular there, forward dynamics refuses, the controller uses a gain floor"
             for i in massless]
    for i in singular_joints(model):
        if i not in massless:
            found.append(f"joint {joints[i].name!r} moves a subtree with no inertia about its "
                         "axis (e.g. point masses on the axis): the mass matrix H is singular at "
                         "the zero pose")
    return found


# Position limits at or beyond this magnitude mean "unlimited" (URDFs write +-1e16 for it).
UNLIMITED_POSITION = 1e9


def joint_properties(joints):
    """(arrays for Model, warnings) from the joints' <limit> and <dynamics>.

    Safe readings: a missing, zero, negative or absurd (>= MAX_MAGNITUDE) effort or velocity
    limit is "not given" (inf; the controller then refuses to command that joint unless told a
    limit); swapped lower/upper are used sorted; lower == upper == 0 is URDF's default for
    omitted attributes and means no position limit, any other lower == upper locks the joint
    there; NaN anywhere is refused; negative damping or friction is read as 0."""
    n = len(joints)
    effort, velocity = np.full(n, np.inf), np.full(n, np.inf)
    position = np.tile([-np.inf, np.inf], (n, 1))
    continuous = np.array([j.type == "continuous" for j in joints])
    damping, friction = np.zeros(n), np.zeros(n)
    safety = np.full((n, 4), np.nan)
    found = []
    for i, joint in enumerate(joints):
        if joint.limit is None:
            if not continuous[i]:
                found.append(f"joint {joint.name!r} ({joint.type}) has no <limit>: no position, "
                             "velocity or effort limit")
        else:
            effort[i], velocity[i] = (_rate_limit(joint, name, found)
                                      for name in ("effort", "velocity"))
            if not continuous[i]:
                position[i] = _position_limits(joint, found)
        if joint.dynamics is not None:
            damping[i], friction[i] = (_dissipation(joint, name, found)
                                       for name in ("damping", "friction"))
        if getattr(joint, "safety_controller", None) is not None:
            safety[i] = [_safety_value(joint, name) for name in SAFETY_ATTRIBUTES]
    return dict(effort_limit=effort, velocity_limit=velocity, position_limits=position,
                continuous=continuous, damping=damping, friction=friction,
                safety_controller=safety), found


# <safety_controller> attributes in Model.safety_controller's column order
SAFETY_ATTRIBUTES = ("soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity")


def _safety_value(joint, name) -> float:
    """One <safety_controller> attribute, NaN where absent (checked against the hard limits by
    control/safety/joint_limits.py, which knows what it uses them for)."""
    value = _attribute(joint, joint.safety_controller, name)
    return np.nan if value is None else value


def _attribute(joint, element, name, bound=MAX_MAGNITUDE):
    value = getattr(element, name)
    return None if value is None else finite_number(value, f"joint {joint.name!r} <{name}>", bound)


def _rate_limit(joint, name, found) -> float:
    value = _attribute(joint, joint.limit, name, math.inf)
    if value is None:
        return np.inf
    if not 0 < value < MAX_MAGNITUDE:
        found.append(f"joint {joint.name!r} has <limit {name}={value!r}>: read as no {name} "
                     "limit")
        return np.inf
    return value


def _position_limits(joint, found):
    lower, upper = (_attribute(joint, joint.limit, name, math.inf) for name in ("lower", "upper"))
    lower = -np.inf if lower is None or lower <= -UNLIMITED_POSITION else lower
    upper = np.inf if upper is None or upper >= UNLIMITED_POSITION else upper
    if lower > upper:
        found.append(f"joint {joint.name!r} has lower limit {lower!r} > upper limit {upper!r}: "
                     "used as the range [upper, lower]")
        return upper, lower
    if lower == upper == 0.0:
        return -np.inf, np.inf
    if lower == upper:
        found.append(f"joint {joint.name!r} has lower == upper == {lower!r}: the joint is "
                     "locked there")
    return lower, upper


def _dissipation(joint, name, found) -> float:
    value = _attribute(joint, joint.dynamics, name)
    if value is None:
        return 0.0
    if value < 0:
        found.append(f"joint {joint.name!r} has negative <dynamics {name}={value!r}>: read as 0")
        return 0.0
    return value
