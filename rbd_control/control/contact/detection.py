"""Contact and collision detection as libfranka's setCollisionBehavior: per-joint torque and
per-axis wrench thresholds, each with a lower level (contact: the flag follows the residual and
clears when the contact ends) and an upper level (collision: latched until reset), and one set
of levels while the motion accelerates, another at constant velocity (the residual is noisier
while accelerating, where model errors in H are multiplied by qdd).

A level of 0 is off (stored as inf, so the comparisons need no branch). Resetting a collision
is refused while a contact flag is still up (libfranka's automaticErrorRecovery refuses as long
as the reflex condition holds).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_control.control.contact.config import LEVELS
from rbd_control.control.contact.errors import ContactConfigError, ContactResetError
from rbd_control.control.flags import any_set

__all__ = ["CollisionThresholds", "CollisionDetector", "ContactState", "AXES"]

AXES = ("fx", "fy", "fz", "tx", "ty", "tz")


def _levels(values, n, name):
    """One (n,) array per level; 0 (off) becomes inf."""
    arrays = []
    for label, value in zip(LEVELS, values):
        array = np.array(np.broadcast_to(np.asarray(value, dtype=float), (n,))) \
            if np.ndim(value) == 0 or len(value) == n else None
        if array is None:
            raise ContactConfigError(f"{name}: the {label} level needs one value or {n}, "
                                     f"got {len(value)}")
        array[array == 0.0] = np.inf
        arrays.append(array)
    return arrays


@dataclass(frozen=True)
class CollisionThresholds:
    """(n,) joint torque levels and (6,) wrench levels [fx fy fz tx ty tz]; inf = off."""

    torque_contact_accelerating: np.ndarray
    torque_collision_accelerating: np.ndarray
    torque_contact_nominal: np.ndarray
    torque_collision_nominal: np.ndarray
    wrench_contact_accelerating: np.ndarray
    wrench_collision_accelerating: np.ndarray
    wrench_contact_nominal: np.ndarray
    wrench_collision_nominal: np.ndarray

    @classmethod
    def from_config(cls, config, n_joints: int) -> "CollisionThresholds":
        """From a checked ContactConfig, for n_joints controlled joints."""
        torque = _levels(config.torque_thresholds, n_joints, "contact.torque_thresholds")
        force = _levels(config.force_thresholds, 3, "contact.force_thresholds")
        moment = _levels(config.moment_thresholds, 3, "contact.moment_thresholds")
        wrench = [np.concatenate([f, m]) for f, m in zip(force, moment)]
        return cls(*torque, *wrench)

    def levels(self, accelerating: bool):
        """(torque contact, torque collision, wrench contact, wrench collision) of a phase."""
        if accelerating:
            return (self.torque_contact_accelerating, self.torque_collision_accelerating,
                    self.wrench_contact_accelerating, self.wrench_collision_accelerating)
        return (self.torque_contact_nominal, self.torque_collision_nominal,
                self.wrench_contact_nominal, self.wrench_collision_nominal)

    @property
    def checks_wrench(self) -> bool:
        return bool(np.isfinite(self.wrench_contact_nominal).any()
                    or np.isfinite(self.wrench_contact_accelerating).any()
                    or np.isfinite(self.wrench_collision_nominal).any()
                    or np.isfinite(self.wrench_collision_accelerating).any())


@dataclass
class ContactState:
    """A copy of the detector's flags (for a publisher), command order / AXES order."""

    contact_joints: np.ndarray
    collision_joints: np.ndarray
    contact_axes: np.ndarray
    collision_axes: np.ndarray
    collided: bool
    reason: str


class CollisionDetector:
    """Flags from one residual and wrench per state; preallocated."""

    def __init__(self, thresholds: CollisionThresholds, joint_names):
        self.thresholds = thresholds
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.contact_joints = np.zeros(n, bool)     # |tau_ext| > contact level, now
        self.collision_joints = np.zeros(n, bool)   # latched
        self.contact_axes = np.zeros(6, bool)
        self.collision_axes = np.zeros(6, bool)
        self._abs_t, self._abs_w = np.empty(n), np.empty(6)
        self._over_t, self._over_w = np.empty(n, bool), np.empty(6, bool)
        self.collided = False
        self.reason = ""

    def update(self, tau_ext, wrench, accelerating: bool) -> bool:
        """tau_ext in command order, wrench [fx..tz] (None: not checked). True when a
        collision latched at this state (it was not latched before)."""
        torque_contact, torque_collision, wrench_contact, wrench_collision = \
            self.thresholds.levels(accelerating)
        abs_t = np.abs(tau_ext, out=self._abs_t)
        np.greater(abs_t, torque_contact, out=self.contact_joints)
        touching = any_set(self.contact_joints)
        if wrench is not None:
            abs_w = np.abs(wrench, out=self._abs_w)
            np.greater(abs_w, wrench_contact, out=self.contact_axes)
            touching = touching or any_set(self.contact_axes)
        if not touching:
            return False                           # contact <= collision level: nothing more
        np.greater(abs_t, torque_collision, out=self._over_t)
        self.collision_joints |= self._over_t
        if wrench is not None:
            np.greater(abs_w, wrench_collision, out=self._over_w)
            self.collision_axes |= self._over_w
        newly = not self.collided and (any_set(self._over_t)
                                       or (wrench is not None and any_set(self._over_w)))
        if newly:
            self.collided = True
            self.reason = self._describe(abs_t, wrench_collision if wrench is not None else None,
                                         torque_collision, accelerating)
        return newly

    def _describe(self, abs_t, wrench_collision, torque_collision, accelerating):
        phase = "accelerating" if accelerating else "at constant velocity"
        parts = [f"joint {self.joint_names[i]} |tau_ext| {abs_t[i]:.4g} > "
                 f"{torque_collision[i]:.4g} N m" for i in np.flatnonzero(self._over_t)]
        if wrench_collision is not None:
            parts += [f"{AXES[a]} |F| {self._abs_w[a]:.4g} > {wrench_collision[a]:.4g}"
                      for a in np.flatnonzero(self._over_w)]
        return f"collision detected ({phase}): " + ", ".join(parts)

    def state(self) -> ContactState:
        return ContactState(self.contact_joints.copy(), self.collision_joints.copy(),
                            self.contact_axes.copy(), self.collision_axes.copy(), self.collided,
                            self.reason)

    @property
    def in_contact(self) -> bool:
        return any_set(self.contact_joints) or any_set(self.contact_axes)

    def reset(self):
        """Clear the latched collision; ContactResetError while still in contact."""
        if self.in_contact:
            joints = [self.joint_names[i] for i in np.flatnonzero(self.contact_joints)]
            axes = [AXES[a] for a in np.flatnonzero(self.contact_axes)]
            raise ContactResetError(
                "collision reset refused: still in contact at "
                + ", ".join([f"joints {joints}"] * bool(joints) + [f"axes {axes}"] * bool(axes)))
        self.collision_joints[:] = False
        self.collision_axes[:] = False
        self.collided = False
        self.reason = ""
