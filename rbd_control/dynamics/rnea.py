"""Recursive Newton-Euler inverse dynamics in body coordinates (RBDA ch. 5, seed 000).

    v_i = X_i v_parent + S_i qd_i
    a_i = X_i a_parent + S_i qdd_i + v_i x S_i qd_i          a_0 = -a_g (gravity as base acc.)
    f_i = I_i a_i + v_i x* I_i v_i - iX_0^* f_ext_i
    tau_i = S_i^T f_i,   f_parent += X_i^T f_i
"""
from numba import int64

from .checks import MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR, state_status
from .external import external_force_in_body, world_transform
from .jcalc import store_joint_transform, subspace_dot
from .model import (A_ANG, A_LIN, AXIS, COM_MOMENT, F_ANG, F_LIN, IBAR, MASS, REVOLUTE, V_ANG,
                    V_LIN, X_E, X_R)
from .spatial import (ZERO, accumulate, add, compiled, cross, cross_force, inertia_times, jit,
                      mat, put, rotate, scale, sub, transform_force_back, transform_motion, vec)


@jit
def base_acceleration(E, gravity):
    """X_i a_0 for a child of the base: the base is at rest, accelerating at -a_g."""
    return ZERO, rotate(E, (-gravity[0], -gravity[1], -gravity[2]))


@jit
def body_force(bodies, i, w, v, dw, dv):
    """f_i = I_i a_i + v_i x* I_i v_i"""
    m, h, Ibar = bodies[i, MASS, 0], vec(bodies, i, COM_MOMENT), mat(bodies, i, IBAR)
    momentum_n, momentum_f = inertia_times(m, h, Ibar, w, v)
    n, f = inertia_times(m, h, Ibar, dw, dv)
    bias_n, bias_f = cross_force(w, v, momentum_n, momentum_f)
    return add(n, bias_n), add(f, bias_f)


@jit
def outward_pass(topology, bodies, gravity, ws, q, qd, qdd, fext):
    for i in range(topology.shape[0]):
        parent, jtype = topology[i, 0], topology[i, 1]
        E, r = store_joint_transform(topology, bodies, ws, i, q[i])
        if parent < 0:
            w, v = ZERO, ZERO
            dw, dv = base_acceleration(E, gravity)
        else:
            w, v = transform_motion(E, r, vec(ws, parent, V_ANG), vec(ws, parent, V_LIN))
            dw, dv = transform_motion(E, r, vec(ws, parent, A_ANG), vec(ws, parent, A_LIN))
        axis = vec(bodies, i, AXIS)
        S_qd, S_qdd = scale(axis, qd[i]), scale(axis, qdd[i])
        # a += S qdd + v x S qd  (c_J = 0 for these joints; S qd x S qd = 0)
        if jtype == REVOLUTE:
            w = add(w, S_qd)
            dw = add(add(dw, S_qdd), cross(w, S_qd))
            dv = add(dv, cross(v, S_qd))
        else:
            v = add(v, S_qd)
            dv = add(add(dv, S_qdd), cross(w, S_qd))
        n, f = body_force(bodies, i, w, v, dw, dv)
        if fext.shape[0] > 0:
            E0, r0 = world_transform(topology, ws, i, E, r)
            n_x, f_x = external_force_in_body(E0, r0, fext, i)
            n, f = sub(n, n_x), sub(f, f_x)
        put(ws, i, V_ANG, w)
        put(ws, i, V_LIN, v)
        put(ws, i, A_ANG, dw)
        put(ws, i, A_LIN, dv)
        put(ws, i, F_ANG, n)
        put(ws, i, F_LIN, f)


@jit
def inward_pass(topology, bodies, ws, tau):
    for i in range(topology.shape[0] - 1, -1, -1):
        parent = topology[i, 0]
        n, f = vec(ws, i, F_ANG), vec(ws, i, F_LIN)
        tau[i] = subspace_dot(topology[i, 1], vec(bodies, i, AXIS), n, f)
        if parent >= 0:
            n_p, f_p = transform_force_back(mat(ws, i, X_E), vec(ws, i, X_R), n, f)
            accumulate(ws, parent, F_ANG, n_p)
            accumulate(ws, parent, F_LIN, f_p)


@jit
def rnea_into(topology, bodies, gravity, ws, q, qd, qdd, fext, tau):
    """tau = ID(q, qd, qdd, f_ext). qdd and tau may be the same array: every qdd is read in
    the outward pass before the inward pass writes the first tau."""
    outward_pass(topology, bodies, gravity, ws, q, qd, qdd, fext)
    inward_pass(topology, bodies, ws, tau)


@compiled(int64(VECTOR, VECTOR, VECTOR, TENSOR, VECTOR, MODEL_INTS, MODEL_BODIES, MODEL_VECTOR,
                TENSOR))
def rnea_kernel(q, qd, qdd, fext, tau, topology, bodies, gravity, ws):
    status = state_status(topology.shape[0], q, qd, qdd)
    if status == 0:
        rnea_into(topology, bodies, gravity, ws, q, qd, qdd, fext, tau)
    return status
