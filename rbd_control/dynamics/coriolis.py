"""Coriolis matrix C(q, qd) with Hdot - 2C skew-symmetric (the Christoffel-consistent
factorisation of Echeandia and Wensing (2021), "Numerical methods to compute the Coriolis matrix
and Christoffel symbols for rigid-body systems"; Pinocchio's computeCoriolisMatrix returns a C
with the same property).

Kinetic energy is sum_k 1/2 v_k^T I_k v_k with v_k = J_k qd, all in world coordinates. With the
body-level factorisation
    B_k = 1/2 (v_k x* I_k - I_k v_k x + (I_k v_k) xbar),   (f xbar) m = m x* f,
one has B_k + B_k^T = dI_k/dt, and
    C = sum_k J_k^T (I_k Jdot_k + B_k J_k)
gives Hdot = C + C^T and C qd = sum_k J_k^T (I_k Jdot_k qd + v_k x* I_k v_k), the bias without G.
Column j of every J_k is the world-frame S_j, and its rate is Sdot_j = v_j x S_j. Summing over
the subtree of d turns the sum into composites, like the CRBA:
    C_dj = (I^c_d S_d)^T Sdot_j + (B^c_d^T S_d)^T S_j,   C_jd = S_j^T (I^c_d Sdot_d + B^c_d S_d)
for j = d and every ancestor j of d. B^c_d is never formed: B^c_d S_d and B^c_d^T S_d are
summed body by body. Not on the 1 kHz path (computed torque uses bias()).
"""
import numpy as np

from rbd_control.dynamics.crba import composite_inertias, world_subspaces_and_inertias
from rbd_control.dynamics.jcalc import joint_transforms
from rbd_control.dynamics.model import IC_H, IC_IBAR, IC_M, S_ANG, S_LIN, parent
from rbd_control.dynamics.spatial import (accumulate, add, cross_force, cross_motion,
                                          inertia_times, jit, mat, put, scale, spatial_dot, sub,
                                          vec)

ANG, LIN = 0, 1   # rows of a spatial vector in the scratch arrays below


@jit
def put_spatial(A, i, pair):
    put(A, i, ANG, pair[0])
    put(A, i, LIN, pair[1])


@jit
def add_spatial(A, i, pair):
    accumulate(A, i, ANG, pair[0])
    accumulate(A, i, LIN, pair[1])


@jit
def subspace(md, i):
    """S_i in world coordinates, as crba.world_subspaces_and_inertias left it"""
    return vec(md, i, S_ANG), vec(md, i, S_LIN)


@jit
def inertia_of(md, k):
    """the world-frame compact inertia in md rows IC"""
    return md[k, IC_M, 0], vec(md, k, IC_H), mat(md, k, IC_IBAR)


@jit
def velocities(md, qd, V, Sdot):
    """inputs: md rows S (world); outputs: v_i and Sdot_i in world coordinates."""
    for i in range(md.shape[0]):
        s_w, s_v = subspace(md, i)
        # v_i = v_p + S_i qd_i
        w, v = scale(s_w, qd[i]), scale(s_v, qd[i])
        p = parent(md, i)
        if p >= 0:
            w, v = add(w, vec(V, p, ANG)), add(v, vec(V, p, LIN))
        put_spatial(V, i, (w, v))
        # Sdot_i = v_i x S_i
        put_spatial(Sdot, i, cross_motion(w, v, s_w, s_v))


@jit
def body_factor_parts(m, h, Ibar, w, v, x_w, x_v):
    """(D x, E x) for B_k = D + (I_k v_k) xbar / 2, E x = 1/2 x x* (I_k v_k), so that
    B_k x = D x + E x and B_k^T x = D x - E x, with D = 1/2 (v_k x* I_k - I_k v_k x)."""
    # v x* (I x)
    n1, f1 = inertia_times(m, h, Ibar, x_w, x_v)
    n1, f1 = cross_force(w, v, n1, f1)
    # I (v x x)
    c_w, c_v = cross_motion(w, v, x_w, x_v)
    n2, f2 = inertia_times(m, h, Ibar, c_w, c_v)
    # x x* (I v)
    p_n, p_f = inertia_times(m, h, Ibar, w, v)
    n3, f3 = cross_force(x_w, x_v, p_n, p_f)
    return (scale(sub(n1, n2), 0.5), scale(sub(f1, f2), 0.5)), (scale(n3, 0.5), scale(f3, 0.5))


@jit
def factor_times_subspaces(md, V, BS, BtS):
    """inputs: md rows S and IC (one body each), V; outputs: BS[d] = B^c_d S_d and
    BtS[d] = B^c_d^T S_d, summed over the bodies k of d's subtree (d = k and its ancestors)."""
    for k in range(md.shape[0]):
        m, h, Ibar = inertia_of(md, k)
        w, v = vec(V, k, ANG), vec(V, k, LIN)
        d = k
        while d >= 0:
            x_w, x_v = subspace(md, d)
            (D_n, D_f), (E_n, E_f) = body_factor_parts(m, h, Ibar, w, v, x_w, x_v)
            # B^c_d S_d += B_k S_d,  B^c_d^T S_d += B_k^T S_d
            add_spatial(BS, d, (add(D_n, E_n), add(D_f, E_f)))
            add_spatial(BtS, d, (sub(D_n, E_n), sub(D_f, E_f)))
            d = parent(md, d)


@jit
def coriolis_into(md, q, qd, C):
    """inputs: q, qd; outputs: C, md."""
    nb = md.shape[0]
    V, Sdot = np.empty((nb, 2, 3)), np.empty((nb, 2, 3))
    BS, BtS = np.zeros((nb, 2, 3)), np.zeros((nb, 2, 3))
    joint_transforms(md, q)
    world_subspaces_and_inertias(md)
    velocities(md, qd, V, Sdot)
    factor_times_subspaces(md, V, BS, BtS)
    composite_inertias(md)
    C[:, :] = 0.0
    for d in range(nb):
        m, h, Ibar = inertia_of(md, d)
        s_w, s_v = subspace(md, d)
        sd_w, sd_v = vec(Sdot, d, ANG), vec(Sdot, d, LIN)
        IS_n, IS_f = inertia_times(m, h, Ibar, s_w, s_v)
        # I^c_d Sdot_d + B^c_d S_d
        ISd_n, ISd_f = inertia_times(m, h, Ibar, sd_w, sd_v)
        F_n, F_f = add(ISd_n, vec(BS, d, ANG)), add(ISd_f, vec(BS, d, LIN))
        Bt_n, Bt_f = vec(BtS, d, ANG), vec(BtS, d, LIN)
        j = d
        while j >= 0:
            x_w, x_v = subspace(md, j)
            xd_w, xd_v = vec(Sdot, j, ANG), vec(Sdot, j, LIN)
            # C_dj = (I^c_d S_d)^T Sdot_j + (B^c_d^T S_d)^T S_j
            C[d, j] = spatial_dot(xd_w, xd_v, IS_n, IS_f) + spatial_dot(x_w, x_v, Bt_n, Bt_f)
            if j != d:
                # C_jd = S_j^T (I^c_d Sdot_d + B^c_d S_d)
                C[j, d] = spatial_dot(x_w, x_v, F_n, F_f)
            j = parent(md, j)
