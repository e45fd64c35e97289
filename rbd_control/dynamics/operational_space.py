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
"""
from numba import int64

from .checks import MATRIX, MODEL_ARGS, VECTOR, vector_status
from .crba import crba_into
from .kinematics import frame_in_body, jacobian_into
from .ltdl import ltdl, ltdl_solve
from .spatial import compiled

SINGULAR = -1


@compiled(int64(VECTOR, int64, MATRIX, VECTOR, MATRIX, MATRIX, MATRIX, MATRIX, *MODEL_ARGS))
def task_inverse_inertia_kernel(q, body, P, point, J, Y, A, H, md):
    """inputs: q, body, P, point; outputs: J (6 x n), Y = (H^-1 J^T)^T (6 x n),
    A = J H^-1 J^T (6 x 6), H (its L^T D L), md. Returns 0, SINGULAR or a status code."""
    status = vector_status(q, md.shape[0], 1)
    if status != 0:
        return status
    R, p = frame_in_body(P, (point[0], point[1], point[2]))
    jacobian_into(md, q, body, R, p, J)
    # H = CRBA(q), then H = L^T D L in place
    crba_into(md, q, H)
    if ltdl(md, H) >= 0:
        return SINGULAR
    for c in range(6):
        # row c of Y = H^-1 (row c of J)
        Y[c, :] = J[c, :]
        ltdl_solve(md, H, Y[c])
    for a in range(6):
        for b in range(a, 6):
            s = 0.0
            for k in range(J.shape[1]):
                s += J[a, k] * Y[b, k]
            A[a, b] = A[b, a] = s
    return 0
