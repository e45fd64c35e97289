"""The operational-space inertia of a link frame (Khatib 1987, "A unified approach for motion
and force control of robot manipulators: the operational space formulation"):

    Lambda = (J H^-1 J^T)^-1

J from the kinematics walk, H from the CRBA, H^-1 J^T from the sparse L^T D L factorisation
(ltdl.py) column by column, so no H^-1 is ever formed. The inverse of the 6 x 6 A = J H^-1 J^T
is regularised where A loses rank (a singular J, or fewer than 6 joints):
    Lambda = (A + mu 1)^-1,    mu = max(0, eps - s_min),    eps = rcond * s_max
with s the eigenvalues of A (Tikhonov damping, as the damped least squares of Nakamura &
Hanafusa 1986, switched on only below eps): exact away from singularities, continuous in q, and
bounded by 1 / eps at them, so a controller built on it never sees an unbounded inertia.
All of it is one compiled call (numba's np.linalg.eigh for the 6 x 6 eigendecomposition).
"""
import numpy as np
from numba import float64, int64

from rbd_control.dynamics.checks import INPUT, MATRIX, MODEL_ARGS, VECTOR, vector_status
from rbd_control.dynamics.crba import crba_into
from rbd_control.dynamics.kinematics import frame_jacobian_into
from rbd_control.dynamics.ltdl import ltdl, ltdl_solve
from rbd_control.dynamics.spatial import compiled, jit

SINGULAR = -1


@jit
def damped_inverse_into(A, rcond, Lambda):
    """Lambda = (A + mu 1)^-1 with mu = max(0, eps - s_min), eps = rcond * s_max, through the
    eigendecomposition A = V diag(s) V^T (LAPACK's dsyevd, as numpy's eigh). Returns mu."""
    s, V = np.linalg.eigh(A)
    mu = max(0.0, rcond * max(s[-1], 0.0) - s[0])
    for a in range(6):
        for b in range(a, 6):
            # Lambda = V diag(1 / (s + mu)) V^T
            x = 0.0
            for k in range(6):
                x += V[a, k] * V[b, k] / (s[k] + mu)
            Lambda[a, b] = Lambda[b, a] = x
    return mu


@compiled(int64(INPUT, MATRIX, float64, MATRIX, MATRIX, MATRIX, VECTOR, MATRIX, *MODEL_ARGS),
          allocates=True)
def operational_space_kernel(q, F, rcond, J, Y, Lambda, damping, H, md):
    """inputs: q, F (kinematics.py, with its point), rcond; outputs: J (6 x n), Y = (H^-1 J^T)^T
    (6 x n), Lambda (6 x 6), damping[0] = mu, H (its L^T D L), md.
    Returns 0, SINGULAR or a status code."""
    status = vector_status(q, md.shape[0], 1)
    if status != 0:
        return status
    frame_jacobian_into(md, q, F, J)
    # H = CRBA(q), then H = L^T D L in place
    crba_into(md, q, H)
    if ltdl(md, H) >= 0:
        return SINGULAR
    for c in range(6):
        # row c of Y = H^-1 (row c of J)
        Y[c, :] = J[c, :]
        ltdl_solve(md, H, Y[c])
    A = np.empty((6, 6))
    for a in range(6):
        for b in range(a, 6):
            # A = J H^-1 J^T
            x = 0.0
            for k in range(J.shape[1]):
                x += J[a, k] * Y[b, k]
            A[a, b] = A[b, a] = x
    damping[0] = damped_inverse_into(A, rcond, Lambda)
    return 0
