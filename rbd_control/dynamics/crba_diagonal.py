"""The diagonal of the joint-space inertia matrix, H_ii(q), without the rest of H.

The CRBA (RBDA, Featherstone 2008, §6.2; crba.py, in world coordinates as Pinocchio's crba)
builds the composite inertias inward,
    I^c_i = I_i + sum over children j of I^c_j,
and the diagonal needs nothing else:
    H_ii = S_i^T I^c_i S_i.
The off-diagonal walk up each branch is what makes the full CRBA O(n * depth) in time and
O(n^2) in memory; the diagonal alone is O(n) time and O(n) memory per pose. Used for the
default-gain rule over many poses and robots with thousands of joints.
The public wrapper is api.crba_diagonal_batch.
"""
from numba import void

from rbd_control.dynamics.checks import MATRIX, MODEL_ARGS
from rbd_control.dynamics.crba import composite_inertias, world_subspaces_and_inertias
from rbd_control.dynamics.jcalc import joint_transforms
from rbd_control.dynamics.model import IC_H, IC_IBAR, IC_M, S_ANG, S_LIN
from rbd_control.dynamics.spatial import compiled, inertia_times, jit, mat, spatial_dot, vec


@jit
def crba_diagonal_into(md, q, D):
    """inputs: q; outputs: D = diag(H(q)), md rows X, W, S, IC."""
    joint_transforms(md, q)
    world_subspaces_and_inertias(md)
    composite_inertias(md)
    for i in range(md.shape[0]):
        # F = I^c_i S_i
        n, f = inertia_times(md[i, IC_M, 0], vec(md, i, IC_H), mat(md, i, IC_IBAR),
                             vec(md, i, S_ANG), vec(md, i, S_LIN))
        # H_ii = S_i^T F
        D[i] = spatial_dot(vec(md, i, S_ANG), vec(md, i, S_LIN), n, f)


@compiled(void(MATRIX, MATRIX, *MODEL_ARGS), nogil=True)
def crba_diagonal_batch_kernel(Q, D, md):
    """inputs: Q (N, nq); outputs: D (N, nq), md."""
    for k in range(Q.shape[0]):
        crba_diagonal_into(md, Q[k], D[k])
