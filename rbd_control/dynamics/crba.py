"""Composite-rigid-body algorithm (RBDA ch. 6, seed 002's mj_crb).

    I^c_i = I_i + sum over children j of X_j^T I^c_j X_j
    H_ii = S_i^T I^c_i S_i,  and walking F = I^c_i S_i up the branch, H_ij = H_ji = S_j^T F.
Only pairs on one branch are non-zero (branch-induced sparsity); the walk visits exactly those,
so the cost is O(n * depth).
"""
from numba import int64

from .checks import MATRIX, MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR, vector_status
from .jcalc import joint_transforms, subspace_dot
from .model import AXIS, COM_MOMENT, IBAR, IC_H, IC_IBAR, IC_M, MASS, REVOLUTE, X_E, X_R
from .spatial import (accumulate, compiled, cross, inertia_back, jit, mat, put, put_mat,
                      rotate, scale, transform_force_back, vec)


@jit
def composite_inertias(topology, bodies, ws):
    nb = topology.shape[0]
    for i in range(nb):
        ws[i, IC_M, 0] = bodies[i, MASS, 0]
        put(ws, i, IC_H, vec(bodies, i, COM_MOMENT))
        put_mat(ws, i, IC_IBAR, mat(bodies, i, IBAR))
    for i in range(nb - 1, -1, -1):
        parent = topology[i, 0]
        if parent >= 0:
            m = ws[i, IC_M, 0]
            h, Ibar = inertia_back(mat(ws, i, X_E), vec(ws, i, X_R), m, vec(ws, i, IC_H),
                                   mat(ws, i, IC_IBAR))
            ws[parent, IC_M, 0] += m
            accumulate(ws, parent, IC_H, h)
            for row in range(3):
                accumulate(ws, parent, IC_IBAR + row, Ibar[row])


@jit
def composite_times_subspace(jtype, axis, ws, i):
    """I^c_i S_i:  revolute [Ibar a; a x h],  prismatic [h x a; m a]."""
    h = vec(ws, i, IC_H)
    if jtype == REVOLUTE:
        return rotate(mat(ws, i, IC_IBAR), axis), cross(axis, h)
    return cross(h, axis), scale(axis, ws[i, IC_M, 0])


@jit
def crba_from_transforms(topology, bodies, ws, H):
    """H(q), assuming the joint transforms X_i in ws are those of q."""
    composite_inertias(topology, bodies, ws)
    H[:, :] = 0.0
    for i in range(topology.shape[0]):
        n, f = composite_times_subspace(topology[i, 1], vec(bodies, i, AXIS), ws, i)
        H[i, i] = subspace_dot(topology[i, 1], vec(bodies, i, AXIS), n, f)
        j = i
        while topology[j, 0] >= 0:
            n, f = transform_force_back(mat(ws, j, X_E), vec(ws, j, X_R), n, f)
            j = topology[j, 0]
            H[i, j] = H[j, i] = subspace_dot(topology[j, 1], vec(bodies, j, AXIS), n, f)


@jit
def crba_into(topology, bodies, ws, q, H):
    joint_transforms(topology, bodies, q, ws)
    crba_from_transforms(topology, bodies, ws, H)


@compiled(int64(VECTOR, MATRIX, MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR))
def crba_kernel(q, H, topology, bodies, gravity, ws):
    status = vector_status(q, topology.shape[0], 1)
    if status == 0:
        crba_into(topology, bodies, ws, q, H)
    return status
