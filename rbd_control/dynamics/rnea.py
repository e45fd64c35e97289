"""Recursive Newton-Euler inverse dynamics in body coordinates (RBDA ch. 5, seed 000).

    v_i = X_i v_parent + S_i qd_i
    a_i = X_i a_parent + S_i qdd_i + v_i x S_i qd_i          a_0 = -a_g (gravity as base acc.)
    f_i = I_i a_i + v_i x* I_i v_i - iX_0^* f_ext_i
    tau_i = S_i^T f_i,   f_parent += X_i^T f_i
"""
import numpy as np

from .checks import (MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR, MATRIX, as_batch,
                     as_vector, raise_for_status, state_status)
from .jcalc import joint_transform, motion_subspace_dot
from .model import (A_ANG, A_LIN, AXIS, COM_MOMENT, F_ANG, F_LIN, IBAR, MASS, REVOLUTE, V_ANG,
                    V_LIN, W_E, W_R, X_E, X_R)
from numba import int64

from .spatial import (add_scaled_cross, add_transformed_force, compiled, inertia_times, jit,
                      rotate, transform_motion)
from .external import external_forces_array, subtract_external_force, world_transform

STATE_NAMES = ("q", "qd", "qdd")


@jit
def outward_pass(topology, bodies, gravity, ws, q, qd, qdd, fext):
    for i in range(topology.shape[0]):
        parent, jtype = topology[i, 0], topology[i, 1]
        joint_transform(bodies, jtype, i, q[i], ws)
        E, r = ws[i, X_E:X_E + 3], ws[i, X_R]
        w, v, dw, dv = ws[i, V_ANG], ws[i, V_LIN], ws[i, A_ANG], ws[i, A_LIN]
        if parent < 0:
            # The base is at rest and accelerates upwards at -a_g: that is gravity.
            w[:] = 0.0
            v[:] = 0.0
            dw[:] = 0.0
            rotate(E, gravity, dv)
            dv *= -1.0
        else:
            transform_motion(E, r, ws[parent, V_ANG], ws[parent, V_LIN], w, v)
            transform_motion(E, r, ws[parent, A_ANG], ws[parent, A_LIN], dw, dv)
        axis = bodies[i, AXIS]
        joint_rate, joint_velocity = (w, dw) if jtype == REVOLUTE else (v, dv)
        for k in range(3):
            joint_rate[k] += axis[k] * qd[i]
            joint_velocity[k] += axis[k] * qdd[i]
        # velocity-product term v_i x S_i qd_i (c_J = 0 for these joints)
        if jtype == REVOLUTE:
            add_scaled_cross(w, axis, qd[i], dw)
            add_scaled_cross(v, axis, qd[i], dv)
        else:
            add_scaled_cross(w, axis, qd[i], dv)
        body_force(bodies, i, ws)
        if fext.shape[0] > 0:
            world_transform(topology, i, ws)
            subtract_external_force(ws, i, fext[i])


@jit
def body_force(bodies, i, ws):
    """f_i = I_i a_i + v_i x* I_i v_i"""
    m, h, Ibar = bodies[i, MASS, 0], bodies[i, COM_MOMENT], bodies[i, IBAR:IBAR + 3]
    w, v = ws[i, V_ANG], ws[i, V_LIN]
    n, f = ws[i, F_ANG], ws[i, F_LIN]
    # momentum I v first (held in scalars), then overwrite with I a and add v x* (I v)
    inertia_times(m, h, Ibar, w, v, n, f)
    pn0, pn1, pn2, pf0, pf1, pf2 = n[0], n[1], n[2], f[0], f[1], f[2]
    inertia_times(m, h, Ibar, ws[i, A_ANG], ws[i, A_LIN], n, f)
    n[0] += w[1] * pn2 - w[2] * pn1 + v[1] * pf2 - v[2] * pf1
    n[1] += w[2] * pn0 - w[0] * pn2 + v[2] * pf0 - v[0] * pf2
    n[2] += w[0] * pn1 - w[1] * pn0 + v[0] * pf1 - v[1] * pf0
    f[0] += w[1] * pf2 - w[2] * pf1
    f[1] += w[2] * pf0 - w[0] * pf2
    f[2] += w[0] * pf1 - w[1] * pf0


@jit
def inward_pass(topology, bodies, ws, tau):
    for i in range(topology.shape[0] - 1, -1, -1):
        parent, jtype = topology[i, 0], topology[i, 1]
        tau[i] = motion_subspace_dot(bodies, jtype, i, ws[i, F_ANG], ws[i, F_LIN])
        if parent >= 0:
            add_transformed_force(ws[i, X_E:X_E + 3], ws[i, X_R], ws[i, F_ANG], ws[i, F_LIN],
                                  ws[parent, F_ANG], ws[parent, F_LIN])


@jit
def rnea_into(topology, bodies, gravity, ws, q, qd, qdd, fext, tau):
    """tau = ID(q, qd, qdd, f_ext). qdd and tau may be the same array: every qdd is read in
    the outward pass before the inward pass writes the first tau."""
    outward_pass(topology, bodies, gravity, ws, q, qd, qdd, fext)
    inward_pass(topology, bodies, ws, tau)


RNEA_SIGNATURE = (MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR, VECTOR, VECTOR, VECTOR, TENSOR,
                  VECTOR)


@compiled(int64(*RNEA_SIGNATURE))
def rnea_kernel(topology, bodies, gravity, ws, q, qd, qdd, fext, tau):
    status = state_status(topology.shape[0], q, qd, qdd)
    if status == 0:
        rnea_into(topology, bodies, gravity, ws, q, qd, qdd, fext, tau)
    return status
