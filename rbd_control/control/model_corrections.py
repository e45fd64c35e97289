"""Corrections to the robot model the controller applies on top of the URDF: joint friction
compensation (identification/friction.py; the URDF's <dynamics> by default, identified values
on top) and a rigid payload carried on a link
(identification/parameters.py with_payload). Both refuse bad input with ConfigError. No rclpy.
"""
from __future__ import annotations

from rbd_control.dynamics import RbdError
from rbd_control.identification.friction import Friction
from rbd_control.identification.parameters import with_payload

from .errors import ConfigError

__all__ = ["friction_compensation", "urdf_friction", "carrying_payload"]


def friction_compensation(model, friction, epsilon, use_urdf=True) -> Friction:
    """{joint: {"viscous": b, "coulomb": f_c}} as a Friction in model order. Joints not named
    get the URDF's <dynamics damping friction> (viscous, Coulomb) with use_urdf, else none: the
    URDF's losses enter the feedforward the way its masses do, and identified (nonzero) values
    replace them joint by joint."""
    values = urdf_friction(model) if use_urdf else {}
    # zero is the friction.* parameters' unset value: it keeps the URDF's (use_urdf off
    # drops those)
    values.update({joint: given for joint, given in (friction or {}).items()
                   if not isinstance(given, dict) or any(given.values())})
    try:
        return Friction.from_dict(model.joint_names, values, epsilon)
    except (RbdError, AttributeError, TypeError) as exc:
        raise ConfigError(f"friction: {exc}") from None


def urdf_friction(model) -> dict:
    """{joint: {"viscous": damping, "coulomb": friction}} of the joints whose URDF declares
    nonzero <dynamics damping friction>."""
    return {joint: {"viscous": float(b), "coulomb": float(c)}
            for joint, b, c in zip(model.joint_names, model.damping, model.friction)
            if b > 0.0 or c > 0.0}


def carrying_payload(bare_model, link, mass, com, inertia):
    """bare_model with a rigid payload on `link` (mass kg; com and inertia about the COM, 3
    moments or 3x3, in the link frame); link None: bare_model itself (mass 0 adds nothing)."""
    if link is None:
        return bare_model
    try:
        return with_payload(bare_model, link, mass, com, inertia)
    except (RbdError, TypeError) as exc:
        raise ConfigError(f"payload rejected: {exc}") from None
