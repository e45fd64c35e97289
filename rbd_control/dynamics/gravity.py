"""Gravity-only recursion: G(q), the RNEA of RBDA (Featherstone 2008) §5.3 with qd = qdd = 0
and no external forces (its gravity-compensation special case); Pinocchio's
computeGeneralizedGravity.

With no motion, every body's acceleration is the base's -a_g seen in its own frame:
a_i = [0; -g_i] with g_i = E_i g_parent, a pure translation. The forces of a whole subtree then
add up to I^c_i a_i, and only the composite mass m^c and first moment h^c = m^c c^c of the
subtree matter:
    G_i = S_i^T I^c_i [0; -g_i] = S_i^T [-h^c_i x g_i; -m^c_i g_i]   (I [0; v] = [h x v; m v])
    m^c_parent += m^c_i,   h^c_parent += E_i^T h^c_i + m^c_i r_i
                                               (X_i^T I^c_i X_i, first moment)
Outward: one rotation per body; inward: one back-rotation. No rotational inertia is touched.
"""
from numba import int64

from rbd_control.dynamics.checks import INPUT, MODEL_ARGS, VECTOR, checked
from rbd_control.dynamics.jcalc import store_joint_transform, subspace_dot
from rbd_control.dynamics.model import (A_LIN, COM_MOMENT, GRAVITY, IC_H, IC_M, MASS, X_E, X_R,
                                        parent)
from rbd_control.dynamics.spatial import (accumulate, add, compiled, cross, jit, mat, put, rotate,
                                          rotate_back, scale, vec)


@jit
def gravity_into(md, q, tau):
    """inputs: q; outputs: tau, md rows X, A_LIN (g_i), IC_M and IC_H (m^c_i, h^c_i)."""
    nb = md.shape[0]
    for i in range(nb):
        p = parent(md, i)
        # iX_p = X_J(q_i) Xtree_i
        E, r = store_joint_transform(md, i, q[i])
        # g_i = E_i g_p  (g_0 = the gravity vector)
        g_parent = vec(md, i, GRAVITY) if p < 0 else vec(md, p, A_LIN)
        put(md, i, A_LIN, rotate(E, g_parent))
        # m^c_i = m_i,  h^c_i = h_i
        md[i, IC_M, 0] = md[i, MASS, 0]
        put(md, i, IC_H, vec(md, i, COM_MOMENT))
    for i in range(nb - 1, -1, -1):
        p = parent(md, i)
        m, h, g = md[i, IC_M, 0], vec(md, i, IC_H), vec(md, i, A_LIN)
        # G_i = S_i^T [-h^c_i x g_i; -m^c_i g_i]
        tau[i] = subspace_dot(md, i, cross(g, h), scale(g, -m))
        if p >= 0:
            # m^c_p += m^c_i,  h^c_p += E_i^T h^c_i + m^c_i r_i
            md[p, IC_M, 0] += m
            accumulate(md, p, IC_H, add(rotate_back(mat(md, i, X_E), h),
                                        scale(vec(md, i, X_R), m)))


@compiled(int64(INPUT, VECTOR, *MODEL_ARGS))
def gravity_kernel(q, tau, md):
    """inputs: q; outputs: tau, md. Returns 0 or a checks status code."""
    return checked(gravity_into, q, tau, md)
