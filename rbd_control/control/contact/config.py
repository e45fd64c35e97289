"""What a user sets for contact awareness (ControllerConfig.contact). Each field is the
parameter contact.<field>: its default and checks come from the parameter table
(params/controller.py), config.contact_from_parameters reads it; `check` refuses NaN, negative
or inconsistent values with a ContactConfigError naming the field."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

from rbd_control.control.contact.errors import ContactConfigError
from rbd_control.params.contact import CONTACT_LEVELS, CONTACT_REACTIONS, contact_levels_reason
from rbd_control.params.controller import CONTROLLER_PARAMETERS

__all__ = ["ContactConfig", "REACTIONS", "LEVELS"]

REACTIONS = CONTACT_REACTIONS
LEVELS = CONTACT_LEVELS
Level = Union[float, Sequence[float]]


def _param(name):
    return CONTROLLER_PARAMETERS.core_default(f"contact.{name}")


@dataclass
class ContactConfig:
    """Observer, detection and reaction settings; see control/README.md, Contact awareness."""

    observer_gain: float = _param("observer_gain")                 # K_O, 1/s
    # [contact, collision] while accelerating, then at constant velocity; N m (N), each a
    # number for every joint or one per controlled joint (command order); 0: level off
    torque_thresholds: Sequence[Level] = _param("torque_thresholds")
    force_thresholds: Sequence[float] = _param("force_thresholds")     # N, fx fy fz
    moment_thresholds: Sequence[float] = _param("moment_thresholds")   # N m, tx ty tz
    acceleration_threshold: float = _param("acceleration_threshold")  # rad/s^2 of desired qdd
    reaction: str = _param("reaction")
    reflex_gain: float = _param("reflex_gain")                     # K_R, dimensionless
    reflex_duration: float = _param("reflex_duration")             # s
    wrench_link: str = _param("wrench_link")                       # "": ee_link, else last link
    wrench_damping: float = _param("wrench_damping")               # lambda
    command_delay: float = _param("command_delay")                 # s
    use_measured_effort: bool = _param("use_measured_effort")

    def check(self):
        """Raise ContactConfigError naming the first invalid field: each by its parameter's
        checks, the torque levels also as one vector per joint (which no parameter holds)."""
        reason = CONTROLLER_PARAMETERS.refusal(self, "contact", skip=("torque_thresholds",))
        if reason:
            raise ContactConfigError(reason)
        check_levels("contact.torque_thresholds", self.torque_thresholds, allow_vectors=True)


def check_levels(name, levels, allow_vectors):
    reason = contact_levels_reason(name, levels, allow_vectors)
    if reason:
        raise ContactConfigError(reason)
