"""Recursive Newton-Euler inverse dynamics in body coordinates: RBDA (Featherstone 2008) §5.3,
Table 5.1, eqs. 5.16-5.20; MuJoCo's mj_rne, Pinocchio's rnea.

    v_i = iX_p v_p + S_i qd_i                           (v_0 = 0)
    a_i = iX_p a_p + S_i qdd_i + v_i x S_i qd_i         (a_0 = -a_g: gravity as base acceleration)
    f_i = I_i a_i + v_i x* I_i v_i - iX_0^* f^x_i
    tau_i = S_i^T f_i,   f_p += iX_p^T f_i
with p = parent(i). Joint types enter only through jcalc.
"""
from numba import int64

from rbd_control.dynamics.checks import MODEL_ARGS, TENSOR, VECTOR, state_status
from rbd_control.dynamics.external import external_force_in_body, world_transform
from rbd_control.dynamics.jcalc import add_joint_motion, store_joint_transform, subspace_dot
from rbd_control.dynamics.model import (A_ANG, A_LIN, COM_MOMENT, F_ANG, F_LIN, GRAVITY, IBAR,
                                        MASS, V_ANG, V_LIN, X_E, X_R, parent)
from rbd_control.dynamics.spatial import (ZERO, accumulate, add, compiled, cross_force,
                                          inertia_times, jit, mat, put, rotate, scale, sub,
                                          transform_force_back, transform_motion, vec)


@jit
def base_acceleration(md, E):
    """iX_0 a_0 for a child of the base: the base is at rest, accelerating at -a_g."""
    return ZERO, rotate(E, scale(vec(md, 0, GRAVITY), -1.0))


@jit
def body_force(md, i, w, v, dw, dv):
    """f^B_i = I_i a_i + v_i x* I_i v_i   (eq. 5.9)"""
    return inertia_force(md[i, MASS, 0], vec(md, i, COM_MOMENT), mat(md, i, IBAR), w, v, dw, dv)


@jit
def inertia_force(m, h, Ibar, w, v, dw, dv):
    """f = I a + v x* I v for the inertia I = (m, h, Ibar); linear in (m, h, Ibar)"""
    momentum_n, momentum_f = inertia_times(m, h, Ibar, w, v)
    n, f = inertia_times(m, h, Ibar, dw, dv)
    bias_n, bias_f = cross_force(w, v, momentum_n, momentum_f)
    return add(n, bias_n), add(f, bias_f)


@jit
def outward_pass(md, q, qd, qdd, fext):
    """inputs: q, qd, qdd, fext (world wrenches per body, or none);
    outputs: md rows X (iX_p), V (v_i), A (a_i), F (f_i before the children's forces)."""
    for i in range(md.shape[0]):
        p = parent(md, i)
        # iX_p = X_J(q_i) Xtree_i
        E, r = store_joint_transform(md, i, q[i])
        if p < 0:
            # v_p = 0,  a_p = -a_g
            w, v = ZERO, ZERO
            dw, dv = base_acceleration(md, E)
        else:
            # iX_p v_p,  iX_p a_p
            w, v = transform_motion(E, r, vec(md, p, V_ANG), vec(md, p, V_LIN))
            dw, dv = transform_motion(E, r, vec(md, p, A_ANG), vec(md, p, A_LIN))
        # v_i = iX_p v_p + S_i qd_i,  a_i = iX_p a_p + S_i qdd_i + v_i x S_i qd_i
        w, v, dw, dv = add_joint_motion(md, i, qd[i], qdd[i], w, v, dw, dv)
        # f_i = I_i a_i + v_i x* I_i v_i
        n, f = body_force(md, i, w, v, dw, dv)
        if fext.shape[0] > 0:
            # f_i -= iX_0^* f^x_i
            E0, r0 = world_transform(md, i, E, r)
            n_x, f_x = external_force_in_body(E0, r0, fext, i)
            n, f = sub(n, n_x), sub(f, f_x)
        put(md, i, V_ANG, w)
        put(md, i, V_LIN, v)
        put(md, i, A_ANG, dw)
        put(md, i, A_LIN, dv)
        put(md, i, F_ANG, n)
        put(md, i, F_LIN, f)


@jit
def inward_pass(md, tau):
    """inputs: md rows X and F from outward_pass; outputs: tau, and F = the joint forces f_i."""
    for i in range(md.shape[0] - 1, -1, -1):
        p = parent(md, i)
        n, f = vec(md, i, F_ANG), vec(md, i, F_LIN)
        # tau_i = S_i^T f_i
        tau[i] = subspace_dot(md, i, n, f)
        if p >= 0:
            # f_p += iX_p^T f_i
            n_p, f_p = transform_force_back(mat(md, i, X_E), vec(md, i, X_R), n, f)
            accumulate(md, p, F_ANG, n_p)
            accumulate(md, p, F_LIN, f_p)


@jit
def rnea_into(md, q, qd, qdd, fext, tau):
    """tau = ID(q, qd, qdd, f_ext). qdd and tau may be the same array: every qdd is read in
    the outward pass before the inward pass writes the first tau."""
    outward_pass(md, q, qd, qdd, fext)
    inward_pass(md, tau)


@compiled(int64(VECTOR, VECTOR, VECTOR, TENSOR, VECTOR, *MODEL_ARGS))
def rnea_kernel(q, qd, qdd, fext, tau, md):
    """inputs: q, qd, qdd, fext; outputs: tau, md. Returns 0 or a checks status code."""
    status = state_status(md.shape[0], q, qd, qdd)
    if status == 0:
        rnea_into(md, q, qd, qdd, fext, tau)
    return status
