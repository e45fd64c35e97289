"""Where each commanded joint's gains come from, in order: the model's defaults (gains.py), the
config's overrides, then what set_gains gave it, remembered per joint so that a joint keeps
them across a new model. Also the model-order copy the laws run on. No rclpy.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from rbd_control.control.laws.gains import Gains
from rbd_control.control.laws.per_joint import GainValue, resolve_per_joint
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.params import bounds

__all__ = ["MAXIMUM", "GainTable", "resolve", "with_config", "in_model_order", "given_to",
           "still_scheduled"]

FIELDS = ("kp", "kd", "ki", "i_clamp")

# the upper bound of each gain-like value (bounds.py)
MAXIMUM = {"kp": bounds.MAX_KP, "kd": bounds.MAX_KD, "ki": bounds.MAX_KI,
           "i_clamp": bounds.MAX_I_CLAMP, "damping": bounds.MAX_KD,
           "effort_limit": bounds.MAX_EFFORT_LIMIT}


def resolve(value: GainValue, joints, default, what: str):
    """A user value of `what` per joint (per_joint.resolve_per_joint), bounded by MAXIMUM."""
    return resolve_per_joint(value, joints, default, what, maximum=MAXIMUM[what])


def given_to(value: GainValue, joints) -> np.ndarray:
    """Which joints a user value names (None: none; a number or a sequence: all)."""
    if value is None:
        return np.zeros(len(joints), dtype=bool)
    if isinstance(value, Mapping):
        return np.array([joint in value for joint in joints], dtype=bool)
    return np.ones(len(joints), dtype=bool)


def still_scheduled(gains: Gains, joints, kp, kd) -> np.ndarray:
    """gains.scheduled without the joints given their own kp or kd."""
    if gains.scheduled is None:
        return np.zeros(len(joints), dtype=bool)
    return gains.scheduled & ~given_to(kp, joints) & ~given_to(kd, joints)


def with_config(base: Gains, joints, config) -> Gains:
    """The default gains with the ControllerConfig's kp, kd, ki, i_clamp on top."""
    return Gains(**{field: resolve(getattr(config, field), joints, getattr(base, field), field)
                    for field in FIELDS}, reference_inertia=base.reference_inertia,
                 scheduled=still_scheduled(base, joints, config.kp, config.kd))


def in_model_order(gains: Gains, joint_map: JointMap) -> Gains:
    """The laws run in model order; joints not commanded get zero gains (inertia 1)."""
    scheduled = (None if gains.scheduled is None
                 else joint_map.put(gains.scheduled.astype(float)) > 0.5)
    return Gains(kp=joint_map.put(gains.kp), kd=joint_map.put(gains.kd),
                 ki=joint_map.put(gains.ki), i_clamp=joint_map.put(gains.i_clamp),
                 reference_inertia=joint_map.put(gains.reference_inertia, fill=1.0),
                 scheduled=scheduled)


class GainTable:
    """The gains set_gains gave, per joint and field, so that a new model keeps them."""

    def __init__(self):
        self._given = {field: {} for field in FIELDS}

    def change(self, current: Gains, names, given: Mapping[str, GainValue]) -> Gains:
        """`current` with the values `given` ({field: value or None}) on top; remembered."""
        new = Gains(**{field: resolve(value, names, getattr(current, field), field)
                       for field, value in given.items()},
                    reference_inertia=current.reference_inertia,
                    scheduled=still_scheduled(current, names, given.get("kp"), given.get("kd")))
        position = {name: i for i, name in enumerate(names)}
        for field, value in given.items():
            if value is not None:   # these joints keep them across set_model
                joints = value.keys() if isinstance(value, Mapping) else names
                values = getattr(new, field)
                self._given[field].update({j: values[position[j]] for j in joints})
        return new

    def carried_over(self, gains: Gains, joints) -> Gains:
        """A new model's gains with the remembered ones of the joints that persist."""
        return Gains(**{
            field: resolve({j: v for j, v in given.items() if j in joints}, joints,
                           getattr(gains, field), field)
            for field, given in self._given.items()}, reference_inertia=gains.reference_inertia,
            scheduled=still_scheduled(gains, joints, self._kept(joints, "kp"),
                                      self._kept(joints, "kd")))

    def _kept(self, joints, field) -> dict:
        return {j: v for j, v in self._given[field].items() if j in joints}
