"""Base parameters: the combinations of pi that torques determine, found numerically.

The regressor stacked over random states, W, has rank r < 10 nq: some parameters never move a
joint (the first body's mass on a vertical axis) and others only move it in fixed combinations
(a child's mass adds to its parent's). QR with column pivoting, W P = Q [R11 R12; 0 0] (Gautier
1990, "Numerical calculation of the base inertial parameters of robots"), splits the columns into
r independent ones and the rest, and

    W pi = W_b pi_b,    pi_b = pi_independent + K pi_dependent,    K = R11^-1 R12.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from rbd_control.dynamics.inertial_parameters import PARAMETER_NAMES
from rbd_control.dynamics.regressor import regressor_batch

RANK_TOLERANCE = 1e-8     # |R_kk| below this fraction of |R_00| counts as zero
SAMPLES_PER_JOINT = 30


@dataclass(frozen=True)
class BaseParameters:
    names: tuple              # "joint:parameter" for each of the 10 nq columns
    independent: np.ndarray   # column indices whose parameters form the base set
    dependent: np.ndarray     # column indices regrouped into the base set (or unidentifiable)
    K: np.ndarray             # (r, 10 nq - r)
    unidentifiable: np.ndarray   # column indices that never affect a torque

    @property
    def count(self) -> int:
        return int(self.independent.size)

    def base(self, pi) -> np.ndarray:
        """pi_b = pi_independent + K pi_dependent"""
        pi = np.asarray(pi, dtype=float)
        return pi[self.independent] + self.K @ pi[self.dependent]

    def describe(self) -> str:
        grouped = [self.names[c] for c in self.dependent if c not in set(self.unidentifiable)]
        return (f"{self.count} base parameters of {len(self.names)}; not identifiable at all: "
                f"{', '.join(self.names[c] for c in self.unidentifiable) or 'none'}; identifiable "
                f"only in combinations: {', '.join(grouped) or 'none'}")


def random_states(model, rng, count):
    """q uniform within the limits ([-pi, pi] where unlimited), qd and qdd ~ N(0, 1)."""
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    lower, upper = np.where(np.isfinite(lower), lower, -np.pi), np.where(np.isfinite(upper),
                                                                         upper, np.pi)
    Q = rng.uniform(lower, upper, size=(count, model.nq))
    return Q, rng.normal(size=(count, model.nq)), rng.normal(size=(count, model.nq))


def base_parameters(model, seed=0, tolerance=RANK_TOLERANCE) -> BaseParameters:
    """The base parameters of model, from SAMPLES_PER_JOINT * nq random states."""
    rng = np.random.default_rng(seed)
    W = regressor_batch(model, *random_states(model, rng, SAMPLES_PER_JOINT * model.nq))
    W = W.reshape(-1, W.shape[-1])
    scale = np.linalg.norm(W, axis=0)
    unidentifiable = np.flatnonzero(scale <= tolerance * scale.max())
    _, R, order = scipy.linalg.qr(W, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(R))
    r = int(np.sum(diagonal > tolerance * diagonal[0]))
    # K from the pivoted factor, then independent columns back in ascending order
    K = scipy.linalg.solve_triangular(R[:r, :r], R[:r, r:])
    keep = np.argsort(order[:r])
    names = tuple(f"{joint}:{p}" for joint in model.joint_names for p in PARAMETER_NAMES)
    K[np.abs(K) < 1e-10] = 0.0
    return BaseParameters(names, order[:r][keep], order[r:], K[keep], unidentifiable)
