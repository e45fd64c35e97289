"""Per-joint gains, and defaults derived from the model so a new robot works untuned.

Default rule (documented in the README):

    h_i  = min over reference poses of H_ii(q)      (joint-space inertia diagonal, kg m^2)
    w    = 2 pi * bandwidth_hz                      (default 8 Hz)
    kp_i = h_i * w^2                                (N m / rad)
    kd_i = 2 * damping_ratio * w * h_i              (N m s / rad, default damping_ratio 1)
    ki_i = 0,  i_clamp_i = 0.2 * effort_limit_i

A joint whose link inertia is h_i and which is driven by kp_i, kd_i behaves like a critically
damped second-order system of bandwidth w. The reference poses are the zero pose (clipped into
the limits) plus 64 poses drawn uniformly within the position limits with a fixed seed, so the
rule is deterministic. Taking the *minimum* keeps the loop stable at a 1 kHz rate in the pose
where the joint is lightest (the bandwidth there is w; elsewhere it is lower, never higher);
feedforward_pd relies on the model term for tracking, not on high gains. h_i is floored at a
millionth of the model's largest h_i (see INERTIA_FLOOR_FRACTION) for joints moving massless
subtrees.

computed_torque multiplies its feedback by H(q), so it needs acceleration gains; it uses
kp_i / h_i and kd_i / h_i, i.e. exactly w^2 and 2 zeta w with the default gains, at every pose.
One set of torque gains (JTC's `gains.<joint>.p/d/i`) therefore serves every mode.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

import numpy as np

from rbd_control.dynamics import crba_diagonal_batch

from rbd_control.control.errors import GainError, brief
from rbd_control.params.bounds import MAX_BANDWIDTH_HZ, MAX_DAMPING_RATIO, MAX_KD, MAX_KP

__all__ = [
    "DEFAULT_BANDWIDTH_HZ",
    "DEFAULT_DAMPING_RATIO",
    "Gains",
    "GainError",
    "reference_inertia",
    "default_gains",
    "resolve_per_joint",
]

DEFAULT_BANDWIDTH_HZ = 8.0
DEFAULT_DAMPING_RATIO = 1.0
DEFAULT_I_CLAMP_FRACTION = 0.2
REFERENCE_POSE_COUNT = 64
REFERENCE_POSE_SEED = 20260520
# Floor on h_i, so that a joint moving a massless subtree (Model.warnings names it; H_ii = 0)
# gets small finite gains instead of zero gains and an infinite acceleration gain: a fraction
# of the model's largest h (relative, so a hand's 1e-6 kg m^2 fingertips are not lifted while a
# humanoid's massless finger gets ~1e-5), and an absolute floor for a model without any mass.
INERTIA_FLOOR_FRACTION = 1e-6
MIN_REFERENCE_INERTIA = 1e-12

GainValue = Union[None, float, Sequence[float], Mapping[str, float]]


@dataclass
class Gains:
    """Torque-space gains for the commanded joints, in command order."""

    kp: np.ndarray
    kd: np.ndarray
    ki: np.ndarray
    i_clamp: np.ndarray
    reference_inertia: np.ndarray   # h_i used to convert to acceleration gains

    @property
    def kp_acc(self) -> np.ndarray:
        return self.kp / self.reference_inertia

    @property
    def kd_acc(self) -> np.ndarray:
        return self.kd / self.reference_inertia


def reference_poses(model) -> np.ndarray:
    """The deterministic pose set of the default-gain rule, shape (1 + 64, nq)."""
    limits = np.array(model.position_limits, dtype=float)
    lower = np.where(np.isfinite(limits[:, 0]), limits[:, 0], -math.pi)
    upper = np.where(np.isfinite(limits[:, 1]), limits[:, 1], math.pi)
    rng = np.random.default_rng(REFERENCE_POSE_SEED)
    random_poses = rng.uniform(lower, upper, size=(REFERENCE_POSE_COUNT, model.nq))
    zero_pose = np.clip(np.zeros(model.nq), lower, upper)
    return np.vstack([zero_pose, random_poses])


def reference_inertia(model) -> np.ndarray:
    """h_i = min over the reference poses of H_ii(q), floored at
    max(INERTIA_FLOOR_FRACTION * max_j h_j, MIN_REFERENCE_INERTIA).

    Only the diagonal of H is computed (O(nq) per pose, not the nq x nq matrix), so this is
    cheap for robots with thousands of joints."""
    h = crba_diagonal_batch(model, reference_poses(model)).min(axis=0)
    return np.maximum(h, max(INERTIA_FLOOR_FRACTION * float(np.max(h)), MIN_REFERENCE_INERTIA))


def default_gains(model, command_index, effort_limit, *, bandwidth_hz=DEFAULT_BANDWIDTH_HZ,
                  damping_ratio=DEFAULT_DAMPING_RATIO) -> Gains:
    """Gains for the joints model.joint_names[command_index] by the rule above."""
    if not (0 < bandwidth_hz <= MAX_BANDWIDTH_HZ):
        raise GainError(f"bandwidth_hz must be in (0, {MAX_BANDWIDTH_HZ:g}], got {bandwidth_hz!r}")
    if not (0 < damping_ratio <= MAX_DAMPING_RATIO):
        raise GainError(f"damping_ratio must be in (0, {MAX_DAMPING_RATIO:g}], got {damping_ratio!r}")
    h = reference_inertia(model)[np.asarray(command_index)]
    omega = 2.0 * math.pi * bandwidth_hz
    return Gains(
        kp=np.minimum(h * omega**2, MAX_KP),     # binds only above h ~ 4e6 kg m^2
        kd=np.minimum(2.0 * damping_ratio * omega * h, MAX_KD),
        ki=np.zeros_like(h),
        i_clamp=DEFAULT_I_CLAMP_FRACTION * np.asarray(effort_limit, dtype=float),
        reference_inertia=h,
    )


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
            raise GainError(f"{what} has {len(values)} values for {len(names)} joints {brief(names)}")
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
