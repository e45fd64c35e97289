"""The controller core's error types: one base, ControlError, and one subclass per kind of input.

    ControlError (RbdError, ValueError)
      ConfigError      a configuration value or gain is invalid          (Controller(), set_*)
        GainError      a gain value is malformed             (laws/per_joint.resolve_per_joint)
      StateError       a measured joint state was rejected                (Controller.update)
        MissingJointsError  the state lacks commanded joints; carries the best-known pose
      TrajectoryError  a trajectory was rejected                         (set_trajectory)
        InvalidJointsError  its joint names are unknown, duplicated or missing
        OldTrajectoryError  it ends before now

ControlError derives from the dynamics' RbdError, so a ROS node catches everything the package
raises about bad input with one `except RbdError`; errors raised by the dynamics inside the
controller are re-raised as the matching ControlError with the dynamics' reason.
Every message names what is wrong; long name lists are shortened by `brief`.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from rbd_control.dynamics.errors import RbdError, brief  # noqa: F401  (re-exported)

__all__ = ["ControlError", "ConfigError", "GainError", "StateError", "MissingJointsError",
           "TrajectoryError", "InvalidJointsError", "OldTrajectoryError", "brief", "duplicates"]


class ControlError(RbdError):
    """Base class of every error the controller core raises about bad input."""


class ConfigError(ControlError):
    """A controller configuration value is invalid; the message names it."""


class GainError(ConfigError):
    """A gain value is malformed: wrong length, unknown joint, negative, not finite or absurd."""


class StateError(ControlError):
    """A measured joint state was rejected; the message says what is wrong with it."""


class MissingJointsError(StateError):
    """A state lacks commanded joints. `q`, `qd` are the state in model order with the missing
    joints filled (fixed_positions or zero), `missing` their model indices."""

    def __init__(self, message, q, qd, missing):
        super().__init__(message)
        self.q, self.qd, self.missing = q, qd, missing


class TrajectoryError(ControlError):
    """A trajectory was rejected; the message says which point / joint / field is wrong."""


class InvalidJointsError(TrajectoryError):
    """The joint names are wrong: unknown, duplicated, missing (FollowJointTrajectory's
    INVALID_JOINTS)."""


class OldTrajectoryError(TrajectoryError):
    """The trajectory ends before now (FollowJointTrajectory's OLD_HEADER_TIMESTAMP)."""


def duplicates(names: Iterable[str]) -> list:
    """The names that occur more than once, in first-occurrence order (O(n))."""
    return [name for name, count in Counter(names).items() if count > 1]
