"""The wrench at a link frame that best explains a joint torque vector, by damped least squares
(Nakamura & Hanafusa 1986; the estimate of franka's O_F_ext_hat_K and KDL's
ChainExternalWrenchEstimator):

    F = (J J^T + lambda^2 1)^-1 J tau

J the frame Jacobian of kinematics.py ([omega; v] in world axes at the link origin), so F is
[moment; force] in world axes at that origin, and tau = J^T F holds exactly when tau lies in
the range of J^T and lambda = 0. lambda > 0 keeps the 6 x 6 matrix positive definite at
singular poses and for links moved by fewer than 6 joints (then F is the minimum-norm wrench,
shrunk by lambda^2 along the directions J cannot see). One compiled call: the Jacobian walk, the
6 x 6 product and its Cholesky factorisation A = L L^T.
"""
from numba import float64, int64

from rbd_control.dynamics.checks import INPUT, MATRIX, MODEL_ARGS, VECTOR, vector_status
from rbd_control.dynamics.kinematics import frame_jacobian_into
from rbd_control.dynamics.spatial import compiled, jit


@jit
def damped_normal_matrix(J, damping2, A):
    """A = J J^T + lambda^2 1 (lower triangle)."""
    n = J.shape[1]
    for a in range(6):
        for b in range(a + 1):
            x = 0.0
            for k in range(n):
                x += J[a, k] * J[b, k]
            A[a, b] = x + (damping2 if a == b else 0.0)


@jit
def cholesky_solve_in_place(A, x):
    """x = A^-1 x for a positive definite A given by its lower triangle, which is overwritten
    by L with A = L L^T (Golub & Van Loan, algorithm 4.2.1); then L y = x, L^T x = y."""
    m = x.shape[0]
    for j in range(m):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        A[j, j] = s ** 0.5
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / A[j, j]
    for i in range(m):
        s = x[i]
        for k in range(i):
            s -= A[i, k] * x[k]
        x[i] = s / A[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, m):
            s -= A[k, i] * x[k]
        x[i] = s / A[i, i]


@compiled(int64(INPUT, MATRIX, INPUT, float64, MATRIX, MATRIX, VECTOR, *MODEL_ARGS))
def frame_wrench_kernel(q, F, tau, damping2, J, A, wrench, md):
    """inputs: q, F (kinematics.py, with its point), tau, damping2 = lambda^2 > 0; outputs: J,
    A (its Cholesky factor), wrench = [n; f]; md is only read. Returns 0 or a status code
    (q: 1, tau: 2)."""
    status = vector_status(q, md.shape[0], 1)
    if status == 0:
        status = vector_status(tau, md.shape[0], 2)
    if status != 0:
        return status
    frame_jacobian_into(md, q, F, J)
    damped_normal_matrix(J, damping2, A)
    # wrench = J tau, then (J J^T + lambda^2 1)^-1 of it
    for a in range(6):
        x = 0.0
        for k in range(J.shape[1]):
            x += J[a, k] * tau[k]
        wrench[a] = x
    cholesky_solve_in_place(A, wrench)
    return 0
