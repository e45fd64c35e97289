"""Corrections to the robot model the controller applies on top of the URDF: joint friction
compensation (identification/friction.py) and a rigid payload carried on a link
(identification/parameters.py with_payload). Both refuse bad input with ConfigError. No rclpy.
"""
from __future__ import annotations

from rbd_control.dynamics import RbdError
from rbd_control.identification.friction import Friction
from rbd_control.identification.parameters import with_payload

from .errors import ConfigError

__all__ = ["friction_compensation", "carrying_payload"]


def friction_compensation(model, friction, epsilon) -> Friction:
    """{joint: {"viscous": b, "coulomb": f_c}} (joints not named get none) as a Friction in
    model order."""
    try:
        return Friction.from_dict(model.joint_names, friction or {}, epsilon)
    except (RbdError, AttributeError, TypeError) as exc:
        raise ConfigError(f"friction: {exc}") from None


def carrying_payload(bare_model, link, mass, com, inertia):
    """bare_model with a rigid payload on `link` (mass kg; com and inertia about the COM, 3
    moments or 3x3, in the link frame); link None: bare_model itself (mass 0 adds nothing)."""
    if link is None:
        return bare_model
    try:
        return with_payload(bare_model, link, mass, com, inertia)
    except (RbdError, TypeError) as exc:
        raise ConfigError(f"payload rejected: {exc}") from None
