"""The inertia a joint feels when every other joint is free to move: m_i(q) = 1 / (H(q)^-1)_ii.

With the others locked, joint i feels H_ii; with them free they give way, and the torque
tau_i meets the inertia of the Schur complement of the rest of H, 1 / (H^-1)_ii <= H_ii (7.8x
lighter than H_ii on the default arm's elbow). A loop closed on every joint at once, or a
force applied to a joint while the others swing, sees this one: the default gains
(control/laws/loop_design.py), their schedule (control/laws/inertia_schedule.py) and the DART
plant's explicit damping (sim/dart_plant.py) size themselves on it.

A joint that moves a massless subtree makes H singular (Model.warnings names it): H is
regularised by REGULARISATION times its largest diagonal entry (at least MIN_INERTIA), far
below any real joint's inertia (it moves m_i by < 1e-6 on the default arm), so such a joint
feels ~0 instead of making the inverse fail.
"""
from __future__ import annotations

import numpy as np
from numba import float64, void

from rbd_control.dynamics.checks import MATRIX, VECTOR
from rbd_control.dynamics.spatial import compiled

__all__ = ["MIN_INERTIA", "REGULARISATION", "free_joint_inertia", "max_inertia_ratio",
           "regularised_inverse"]

REGULARISATION = 1e-12
MIN_INERTIA = 1e-12   # kg m^2 (or kg): the regularisation's floor, for a massless model


def regularised_inverse(H: np.ndarray) -> np.ndarray:
    """(H + eps I)^-1, eps = max(REGULARISATION max_i H_ii, MIN_INERTIA): one compiled call
    (feedforward_pd's schedule calls this per state; numpy's inv costs ~4 µs of Python)."""
    H_inv = np.empty_like(H, dtype=float, order="C")
    regularised_inverse_kernel(np.ascontiguousarray(H, dtype=float), H_inv)
    return H_inv


def free_joint_inertia(H_inv: np.ndarray) -> np.ndarray:
    """m_i = 1 / (H^-1)_ii from regularised_inverse(H)."""
    return 1.0 / np.diag(H_inv)


def max_inertia_ratio(d: np.ndarray, H_inv: np.ndarray) -> float:
    """lambda_max(H^-1 D) for D = diag(d) > 0, as the symmetric lambda_max(D^1/2 H^-1 D^1/2):
    D <= H in the Loewner order iff it is <= 1, and D / it is the largest D of that shape that
    is. One compiled call."""
    return max_inertia_ratio_kernel(np.ascontiguousarray(d, dtype=float),
                                    np.ascontiguousarray(H_inv, dtype=float))


@compiled(void(MATRIX, MATRIX), allocates=True)
def regularised_inverse_kernel(H, H_inv):
    """H_inv = (H + eps 1)^-1 (numba's np.linalg.inv: LAPACK getrf + getri)."""
    n = H.shape[0]
    largest = 0.0   # H is positive semi-definite: its diagonal is >= 0
    for i in range(n):
        largest = max(largest, H[i, i])
    eps = max(REGULARISATION * largest, MIN_INERTIA)
    A = H.copy()
    for i in range(n):
        A[i, i] += eps
    H_inv[:, :] = np.linalg.inv(A)


@compiled(float64(VECTOR, MATRIX), allocates=True)
def max_inertia_ratio_kernel(d, H_inv):
    """lambda_max(D^1/2 H^-1 D^1/2) (numba's np.linalg.eigvalsh: LAPACK syevd)."""
    n = d.shape[0]
    root = np.sqrt(d)
    B = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            B[i, j] = root[i] * H_inv[i, j] * root[j]
    return np.linalg.eigvalsh(B)[n - 1]
