"""Joint friction: viscous b and Coulomb f_c per joint, smoothed at zero velocity,

    tau_f = b qd + f_c tanh(qd / epsilon),

linear in phi = (b_0, fc_0, b_1, fc_1, ...), so it joins the regressor as two columns per joint.

epsilon (rad/s or m/s) sets how fast the Coulomb term reaches f_c; tanh is smooth and odd, so a
controller using it never chatters at rest. DEFAULT_EPSILON = 0.01 rad/s: tanh reaches 0.76 f_c
at 0.01 rad/s and 0.995 f_c at 0.03 rad/s. MuJoCo's frictionloss is not this law but a soft
constraint; stiffened (solreffriction 2 ms, solimpfriction 0.99..0.999 at 1 kHz) it gives the
full f_c above ~0.001 rad/s on heavy joints and ~0.03 rad/s on a 0.002 kg m^2 wrist, i.e. it
is Coulomb friction with a shorter, inertia-dependent transition than the tanh.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_control.dynamics.errors import InputError

DEFAULT_EPSILON = 0.01
PER_JOINT = 2   # viscous, coulomb


def friction_columns(QD, epsilon=DEFAULT_EPSILON) -> np.ndarray:
    """Y_f with tau_f = Y_f phi: (N, nq, 2 nq) for QD (N, nq), or (nq, 2 nq) for one qd."""
    QD = np.asarray(QD, dtype=float)
    single = QD.ndim == 1
    QD = np.atleast_2d(QD)
    N, n = QD.shape
    Y = np.zeros((N, n, PER_JOINT * n))
    joints = np.arange(n)
    Y[:, joints, PER_JOINT * joints] = QD
    Y[:, joints, PER_JOINT * joints + 1] = np.tanh(QD / epsilon)
    return Y[0] if single else Y


@dataclass(frozen=True)
class Friction:
    """Per-joint coefficients, in the model's joint order."""

    joint_names: tuple
    viscous: np.ndarray
    coulomb: np.ndarray
    epsilon: float = DEFAULT_EPSILON

    def __post_init__(self):
        n = len(self.joint_names)
        for name in ("viscous", "coulomb"):
            value = np.array(getattr(self, name), dtype=float).reshape(-1)
            if value.shape != (n,) or not np.all(np.isfinite(value)) or np.any(value < 0):
                raise InputError(f"friction {name} must be {n} finite numbers >= 0, got "
                                 f"{getattr(self, name)!r}")
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        if not (np.isfinite(self.epsilon) and self.epsilon > 0):
            raise InputError(f"friction epsilon must be a positive number, got {self.epsilon!r}")
        # some joint has friction (else torque() is zero and a controller skips it)
        object.__setattr__(self, "active", bool(np.any(self.viscous) or np.any(self.coulomb)))

    @classmethod
    def none(cls, joint_names, epsilon=DEFAULT_EPSILON) -> "Friction":
        n = len(joint_names)
        return cls(tuple(joint_names), np.zeros(n), np.zeros(n), epsilon)

    @classmethod
    def from_parameters(cls, joint_names, phi, epsilon=DEFAULT_EPSILON) -> "Friction":
        phi = np.asarray(phi, dtype=float).reshape(-1, PER_JOINT)
        return cls(tuple(joint_names), phi[:, 0], phi[:, 1], epsilon)

    @classmethod
    def from_dict(cls, joint_names, values, epsilon=DEFAULT_EPSILON) -> "Friction":
        """values: {joint: {"viscous": b, "coulomb": f_c}}; joints not named get none."""
        unknown = sorted(set(values) - set(joint_names))
        if unknown:
            raise InputError(f"friction given for unknown joints {unknown}")

        def get(key):
            return [float(values.get(j, {}).get(key, 0.0)) for j in joint_names]
        return cls(tuple(joint_names), get("viscous"), get("coulomb"), epsilon)

    @property
    def parameters(self) -> np.ndarray:
        """phi = (b_0, fc_0, b_1, fc_1, ...)"""
        return np.column_stack((self.viscous, self.coulomb)).reshape(-1)

    def torque(self, qd) -> np.ndarray:
        """tau_f = b qd + f_c tanh(qd / epsilon), for one qd (nq,) or a batch (N, nq)."""
        qd = np.asarray(qd, dtype=float)
        return self.viscous * qd + self.coulomb * np.tanh(qd / self.epsilon)

    def as_dict(self) -> dict:
        return {j: {"viscous": float(b), "coulomb": float(c)}
                for j, b, c in zip(self.joint_names, self.viscous, self.coulomb)}
