"""A user's per-joint value (a gain, an effort limit, a posture) as the controller takes it:
None, one number for every joint, one per joint, or {joint: value}; turned into an array in a
given joint order. No rclpy.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence, Union

import numpy as np

from rbd_control.control.errors import GainError, brief

__all__ = ["GainValue", "resolve_per_joint"]

GainValue = Union[None, float, Sequence[float], Mapping[str, float]]


def resolve_per_joint(value: GainValue, names: Sequence[str], default: np.ndarray, what: str,
                      *, minimum: float = 0.0, maximum: float = math.inf) -> np.ndarray:
    """Turn a user value into a per-joint array in `names` order.

    None -> default; a number -> every joint; a sequence -> one per joint in `names` order;
    a mapping joint -> value -> those joints, the default for the rest. Values must be finite
    and in [minimum, maximum] (bounds.py); errors name the gain and the joint.
    """
    out = np.array(default, dtype=float, copy=True)
    if value is None:
        pass
    elif isinstance(value, Mapping):
        position = {name: i for i, name in enumerate(names)}
        for joint, v in value.items():
            if joint not in position:
                raise GainError(f"{what}: {joint!r} is not a commanded joint ({brief(names)})")
            out[position[joint]] = _number(v, what, joint)
    elif np.ndim(value) == 0:
        out[:] = _number(value, what, "all joints")
    else:
        values = list(value)
        if len(values) != len(names):
            raise GainError(f"{what} has {len(values)} values for {len(names)} joints "
                            f"{brief(names)}")
        out[:] = [_number(v, what, name) for v, name in zip(values, names)]
    bad = np.flatnonzero(~(out >= minimum))
    if bad.size:
        raise GainError(f"{what} for {names[bad[0]]} is {out[bad[0]]}, must be >= {minimum}")
    bad = np.flatnonzero(out > maximum)
    if bad.size:
        raise GainError(f"{what} for {names[bad[0]]} is {out[bad[0]]:g}, beyond the bound "
                        f"{maximum:g} no real robot needs")
    return out


def _number(value, what, joint) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise GainError(f"{what} for {joint} is not a number: {value!r}") from None
    if not math.isfinite(number):
        raise GainError(f"{what} for {joint} is not finite: {value!r}")
    return number
