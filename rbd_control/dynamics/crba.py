"""Composite-rigid-body algorithm (RBDA ch. 6, seed 002's mj_crb).

    I^c_i = I_i + sum over children j of X_j^T I^c_j X_j
    H_ii = S_i^T I^c_i S_i,  and walking F = I^c_i S_i up the branch, H_ij = H_ji = S_j^T F.
Only pairs on one branch are non-zero (branch-induced sparsity); the walk visits exactly those,
so the cost is O(n * depth).
"""
from numba import int64

from .checks import MATRIX, MODEL_BODIES, MODEL_INTS, TENSOR, VECTOR, vector_status
from .jcalc import joint_transforms, motion_subspace_dot
from .model import (AXIS, COM_MOMENT, F_ANG, F_LIN, IBAR, IC_H, IC_IBAR, IC_M, MASS, REVOLUTE,
                    X_E, X_R)
from .spatial import add_cross, compiled, inertia_to_parent, jit


@jit
def composite_inertias(topology, bodies, ws):
    nb = topology.shape[0]
    for i in range(nb):
        ws[i, IC_M, 0] = bodies[i, MASS, 0]
        ws[i, IC_H] = bodies[i, COM_MOMENT]
        ws[i, IC_IBAR:IC_IBAR + 3] = bodies[i, IBAR:IBAR + 3]
    for i in range(nb - 1, -1, -1):
        parent = topology[i, 0]
        if parent >= 0:
            ws[parent, IC_M, 0] += ws[i, IC_M, 0]
            inertia_to_parent(ws[i, X_E:X_E + 3], ws[i, X_R], ws[i, IC_M, 0], ws[i, IC_H],
                              ws[i, IC_IBAR:IC_IBAR + 3], ws[parent, IC_H],
                              ws[parent, IC_IBAR:IC_IBAR + 3])


@jit
def composite_times_subspace(bodies, jtype, i, ws, n, f):
    """[n; f] = I^c_i S_i:  revolute [Ibar a; a x h],  prismatic [h x a; m a]."""
    axis, h = bodies[i, AXIS], ws[i, IC_H]
    if jtype == REVOLUTE:
        Ibar = ws[i, IC_IBAR:IC_IBAR + 3]
        for k in range(3):
            n[k] = Ibar[k, 0] * axis[0] + Ibar[k, 1] * axis[1] + Ibar[k, 2] * axis[2]
            f[k] = 0.0
        add_cross(axis, h, f)
    else:
        m = ws[i, IC_M, 0]
        for k in range(3):
            n[k] = 0.0
            f[k] = m * axis[k]
        add_cross(h, axis, n)


@jit
def force_to_parent_in_place(E, r, n, f):
    """[n; f] <- X^T [n; f]"""
    f0 = E[0, 0] * f[0] + E[1, 0] * f[1] + E[2, 0] * f[2]
    f1 = E[0, 1] * f[0] + E[1, 1] * f[1] + E[2, 1] * f[2]
    f2 = E[0, 2] * f[0] + E[1, 2] * f[1] + E[2, 2] * f[2]
    n0 = E[0, 0] * n[0] + E[1, 0] * n[1] + E[2, 0] * n[2] + r[1] * f2 - r[2] * f1
    n1 = E[0, 1] * n[0] + E[1, 1] * n[1] + E[2, 1] * n[2] + r[2] * f0 - r[0] * f2
    n2 = E[0, 2] * n[0] + E[1, 2] * n[1] + E[2, 2] * n[2] + r[0] * f1 - r[1] * f0
    n[0], n[1], n[2], f[0], f[1], f[2] = n0, n1, n2, f0, f1, f2


@jit
def crba_from_transforms(topology, bodies, ws, H):
    """H(q), assuming the joint transforms X_i in ws are those of q."""
    composite_inertias(topology, bodies, ws)
    H[:, :] = 0.0
    for i in range(topology.shape[0]):
        n, f = ws[i, F_ANG], ws[i, F_LIN]      # F = I^c_i S_i, carried up the branch
        composite_times_subspace(bodies, topology[i, 1], i, ws, n, f)
        H[i, i] = motion_subspace_dot(bodies, topology[i, 1], i, n, f)
        j = i
        while topology[j, 0] >= 0:
            force_to_parent_in_place(ws[j, X_E:X_E + 3], ws[j, X_R], n, f)
            j = topology[j, 0]
            H[i, j] = H[j, i] = motion_subspace_dot(bodies, topology[j, 1], j, n, f)


@jit
def crba_into(topology, bodies, ws, q, H):
    joint_transforms(topology, bodies, q, ws)
    crba_from_transforms(topology, bodies, ws, H)


@compiled(int64(MODEL_INTS, MODEL_BODIES, TENSOR, VECTOR, MATRIX))
def crba_kernel(topology, bodies, ws, q, H):
    status = vector_status(q, topology.shape[0], 1)
    if status == 0:
        crba_into(topology, bodies, ws, q, H)
    return status
