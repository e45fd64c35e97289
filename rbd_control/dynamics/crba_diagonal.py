"""The diagonal of the joint-space inertia matrix, H_ii(q), without the rest of H.

CRBA (RBDA, Featherstone 2008, §6.2, Table 6.2) builds the composite inertias inward,
    I^c_i = I_i + sum over children j of X_j^T I^c_j X_j,
and the diagonal needs nothing else:
    H_ii = S_i^T I^c_i S_i.
The off-diagonal walk up each branch is what makes the full CRBA O(n * depth) in time and
O(n^2) in memory; the diagonal alone is O(n) time and O(n) memory per pose. Used for the
default-gain rule over many poses and robots with thousands of joints.
The public wrapper is api.crba_diagonal_batch.
"""
from numba import void

from .checks import MATRIX, MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR
from .crba import composite_inertias
from .jcalc import inertia_times_subspace, joint_transforms, subspace_dot
from .model import IC_H, IC_IBAR, IC_M
from .spatial import compiled, jit, mat, vec


@jit
def crba_diagonal_into(topology, bodies, ws, q, D):
    """inputs: q; outputs: D = diag(H(q)), ws rows X and IC."""
    joint_transforms(topology, bodies, q, ws)
    composite_inertias(topology, bodies, ws)
    for i in range(topology.shape[0]):
        # F = I^c_i S_i
        n, f = inertia_times_subspace(topology, bodies, i, ws[i, IC_M, 0], vec(ws, i, IC_H),
                                      mat(ws, i, IC_IBAR))
        # H_ii = S_i^T F
        D[i] = subspace_dot(topology, bodies, i, n, f)


@compiled(void(MATRIX, MATRIX, MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR))
def crba_diagonal_batch_kernel(Q, D, topology, bodies, gravity, ws):
    """inputs: Q (N, nq); outputs: D (N, nq), ws."""
    for k in range(Q.shape[0]):
        crba_diagonal_into(topology, bodies, ws, Q[k], D[k])

