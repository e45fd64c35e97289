"""Composite-rigid-body algorithm: RBDA (Featherstone 2008) §6.2 (Table 6.2 gives it in body
coordinates); here in world (root) coordinates, as Pinocchio's crba does; MuJoCo's mj_crb.

    I^c_i = I_i + sum over children j of I^c_j       (world coordinates: inertias just add)
    F = I^c_i S_i,   H_ij = H_ji = S_j^T F   for j = i and every ancestor j of i.
Only pairs on one branch are non-zero (branch-induced sparsity); the walk visits exactly those,
so the cost is O(n * depth), and in world coordinates each pair is one 6-vector dot product
with no transform between the steps of a walk.
"""
from numba import int64

from rbd_control.dynamics.checks import INPUT, MATRIX, MODEL_ARGS, checked
from rbd_control.dynamics.external import world_transform
from rbd_control.dynamics.jcalc import joint_transforms, subspace_from
from rbd_control.dynamics.model import (COM_MOMENT, IBAR, IC_H, IC_IBAR, IC_M, MASS, S_ANG, S_LIN,
                                        X_E, X_R, parent)
from rbd_control.dynamics.spatial import (accumulate, compiled, inertia_back, inertia_times, jit,
                                          mat, put, put_mat, spatial_dot, vec)


@jit
def world_subspaces_and_inertias(md):
    """inputs: md rows X; outputs: md rows W (0X_i), S (S_i) and IC (I_i), all in world
    coordinates."""
    for i in range(md.shape[0]):
        # 0X_i = iX_p pX_0
        E0, r0 = world_transform(md, i, mat(md, i, X_E), vec(md, i, X_R))
        # S_i (world) = iX_0^-1 S_i
        w, v = subspace_from(md, i, E0, r0)
        put(md, i, S_ANG, w)
        put(md, i, S_LIN, v)
        # I_i (world) = iX_0^T I_i iX_0
        m = md[i, MASS, 0]
        h, Ibar = inertia_back(E0, r0, m, vec(md, i, COM_MOMENT), mat(md, i, IBAR))
        md[i, IC_M, 0] = m
        put(md, i, IC_H, h)
        put_mat(md, i, IC_IBAR, Ibar)


@jit
def add_to_parent(md, i, m, h, Ibar):
    """I^c_p += I^c_i = (m, h, Ibar) for the parent p of body i (nothing for the base)."""
    p = parent(md, i)
    if p >= 0:
        md[p, IC_M, 0] += m
        accumulate(md, p, IC_H, h)
        accumulate(md, p, IC_IBAR, Ibar[0])
        accumulate(md, p, IC_IBAR + 1, Ibar[1])
        accumulate(md, p, IC_IBAR + 2, Ibar[2])


@jit
def composite_inertias(md):
    """inputs: md rows IC holding each I_i in world coordinates; outputs: IC = I^c_i."""
    for i in range(md.shape[0] - 1, -1, -1):
        # I^c_p += I^c_i
        add_to_parent(md, i, md[i, IC_M, 0], vec(md, i, IC_H), mat(md, i, IC_IBAR))


@jit
def crba_from_transforms(md, H):
    """inputs: md rows X (the joint transforms at q); outputs: H, md rows W, S, IC.

    One inward pass (RBDA Table 6.2's loop order): when body i is reached, every child j > i
    has already added its I^c_j, so I^c_i is complete; its column of H is taken, then it is
    added to its parent's."""
    world_subspaces_and_inertias(md)
    H[:, :] = 0.0
    for i in range(md.shape[0] - 1, -1, -1):
        # F = I^c_i S_i
        m, h, Ibar = md[i, IC_M, 0], vec(md, i, IC_H), mat(md, i, IC_IBAR)
        n, f = inertia_times(m, h, Ibar, vec(md, i, S_ANG), vec(md, i, S_LIN))
        j = i
        while j >= 0:
            # H_ij = H_ji = S_j^T F
            H[i, j] = H[j, i] = spatial_dot(vec(md, j, S_ANG), vec(md, j, S_LIN), n, f)
            j = parent(md, j)
        # I^c_p += I^c_i
        add_to_parent(md, i, m, h, Ibar)


@jit
def crba_into(md, q, H):
    joint_transforms(md, q)
    crba_from_transforms(md, H)


@compiled(int64(INPUT, MATRIX, *MODEL_ARGS))
def crba_kernel(q, H, md):
    """inputs: q; outputs: H, md. Returns 0 or a checks status code."""
    return checked(crba_into, q, H, md)
