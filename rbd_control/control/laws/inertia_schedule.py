"""Inertia scheduling of feedforward_pd's default gains: the rule of gains.py at the pose the
arm is in, not only at its worst reference pose (loop_design.py's step 1 at that pose). No rclpy.

Why. The default gains are kp_i = w^2 d_i, kd_i = 2 zeta w d_i with one constant diagonal
D = diag(d_i) <= H(q) at every reference pose (loop_design.py, step 1), so no mode of the loop is
faster than the unit loop the discrete-time rule designed. At any one pose D is far below
H(q): the loop's modes are those of H(q)^-1 D with eigenvalues lambda_k, and a mode with
lambda_k < 1 is slower (w sqrt(lambda_k)) and less damped (zeta sqrt(lambda_k)); it decays at
lambda_k zeta w. At the home poses lambda_min is 0.028 (default arm), 0.060 (UR5) and 0.0086
(Panda): a knocked Panda still rang 27 mrad off after 3 s, and tracking at 250 Hz with
10 ms of delay erred 8.9 mrad RMS.

The schedule. Per state, the same construction at the measured pose q alone:
    m_i(q)  = 1 / (H(q)^-1)_ii                           (every other joint free)
    mu(q)   = lambda_max(M^1/2 H(q)^-1 M^1/2),  M = diag(m_i(q))      (per subtree)
    d_i(q)  = m_i(q) / mu(q)          so D(q) <= H(q) and lambda_max(H(q)^-1 D(q)) = 1
and a default-rule joint's gains become s_i kp_i, s_i kd_i with s_i = d_i(q) / d_i. The
fastest mode is then exactly the designed unit loop (the margins of loop_design.py hold at every
pose, not only at the reference ones: frozen-pose analysis, valid while the pose changes
slowly against the loop, as for any gain schedule), and the slow modes come up to
lambda_min = 0.13 / 0.15 / 0.13 at the same home poses. A joint whose kp or kd a user set
keeps them as given (JTC's constant gains); computed_torque needs none of this (its feedback
is H(q) times the acceleration gains). The cost is one CRBA, one small inverse and one
symmetric eigenvalue per subtree per state.
"""
from __future__ import annotations

import numpy as np

from rbd_control.control.laws.loop_design import subtrees
from rbd_control.dynamics import crba
from rbd_control.dynamics.free_inertia import (free_joint_inertia, max_inertia_ratio,
                                               regularised_inverse)

__all__ = ["InertiaSchedule", "MIN_SCALE", "MAX_SCALE"]

# s_i's bounds: far outside what a real arm reaches (0.72-90 on the default arm, UR5, Panda and
# xArm7 over their reference poses); they keep a near-singular H from producing absurd gains
MIN_SCALE, MAX_SCALE = 1e-3, 1e3


class InertiaSchedule:
    """s(q) for the model-order gains of one model: 1 where a joint is not scheduled."""

    def __init__(self, model, reference_inertia: np.ndarray, scheduled: np.ndarray):
        # per subtree: its block of H (None for the whole tree: no copy) and its joints
        self._blocks = [(None if b.size == model.nq else np.ix_(b, b), b)
                        for b in subtrees(model) if np.any(scheduled[b])]
        self._reference = np.asarray(reference_inertia, dtype=float)
        self._scheduled = np.asarray(scheduled, dtype=bool)
        self.active = bool(self._blocks)

    def scale(self, model, q) -> np.ndarray:
        """s_i(q) = d_i(q) / d_i (module doc) for the scheduled joints, 1 for the rest."""
        s = np.ones(self._reference.size)
        H = crba(model, q)
        for block, b in self._blocks:
            # H^-1 of the subtree, regularised as loop_design.reference_inertia's
            H_inv = regularised_inverse(H if block is None else H[block])
            # m_i = 1 / (H^-1)_ii;  mu = lambda_max(H^-1 M)
            m = free_joint_inertia(H_inv)
            mu = max_inertia_ratio(m, H_inv)
            # d_i(q) = m_i / mu
            s[b] = m / max(mu, 1.0) / self._reference[b]
        np.clip(s, MIN_SCALE, MAX_SCALE, out=s)
        s[~self._scheduled] = 1.0
        return s
