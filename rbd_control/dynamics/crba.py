"""Composite-rigid-body algorithm: RBDA (Featherstone 2008) §6.2, Table 6.2; MuJoCo's mj_crb,
Pinocchio's crba.

    I^c_i = I_i + sum over children j of jX_i^T I^c_j jX_i
    H_ii = S_i^T I^c_i S_i,  and walking F = I^c_i S_i up the branch, H_ij = H_ji = S_j^T F.
Only pairs on one branch are non-zero (branch-induced sparsity); the walk visits exactly those,
so the cost is O(n * depth).
"""
from numba import int64

from .checks import MATRIX, MODEL_ARGS, VECTOR, vector_status
from .jcalc import inertia_times_subspace, joint_transforms, subspace_dot
from .model import COM_MOMENT, IBAR, IC_H, IC_IBAR, IC_M, MASS, X_E, X_R, parent
from .spatial import (accumulate, compiled, inertia_back, jit, mat, put, put_mat,
                      transform_force_back, vec)


@jit
def composite_inertias(md):
    """inputs: md rows X; outputs: md rows IC (I^c_i as m, h, Ibar)."""
    nb = md.shape[0]
    for i in range(nb):
        # I^c_i = I_i
        md[i, IC_M, 0] = md[i, MASS, 0]
        put(md, i, IC_H, vec(md, i, COM_MOMENT))
        put_mat(md, i, IC_IBAR, mat(md, i, IBAR))
    for i in range(nb - 1, -1, -1):
        p = parent(md, i)
        if p >= 0:
            # I^c_p += iX_p^T I^c_i iX_p
            m = md[i, IC_M, 0]
            h, Ibar = inertia_back(mat(md, i, X_E), vec(md, i, X_R), m, vec(md, i, IC_H),
                                   mat(md, i, IC_IBAR))
            md[p, IC_M, 0] += m
            accumulate(md, p, IC_H, h)
            for row in range(3):
                accumulate(md, p, IC_IBAR + row, Ibar[row])


@jit
def crba_from_transforms(md, H):
    """inputs: md rows X (the joint transforms at q); outputs: H, md rows IC."""
    composite_inertias(md)
    H[:, :] = 0.0
    for i in range(md.shape[0]):
        # F = I^c_i S_i
        n, f = inertia_times_subspace(md, i, md[i, IC_M, 0], vec(md, i, IC_H),
                                      mat(md, i, IC_IBAR))
        # H_ii = S_i^T F
        H[i, i] = subspace_dot(md, i, n, f)
        j = i
        while parent(md, j) >= 0:
            # F = jX_p^T F,  j = p,  H_ij = H_ji = S_j^T F
            n, f = transform_force_back(mat(md, j, X_E), vec(md, j, X_R), n, f)
            j = parent(md, j)
            H[i, j] = H[j, i] = subspace_dot(md, j, n, f)


@jit
def crba_into(md, q, H):
    joint_transforms(md, q)
    crba_from_transforms(md, H)


@compiled(int64(VECTOR, MATRIX, *MODEL_ARGS))
def crba_kernel(q, H, md):
    """inputs: q; outputs: H, md. Returns 0 or a checks status code."""
    status = vector_status(q, md.shape[0], 1)
    if status == 0:
        crba_into(md, q, H)
    return status
