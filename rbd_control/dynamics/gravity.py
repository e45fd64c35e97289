"""Gravity-only recursion (seed 000's simplified RNEA for qd = qdd = 0).

With no motion, every body's acceleration is the base's -a_g seen in its own frame: a_i = [0; -g_i]
with g_i = E_i g_parent, a pure translation. The forces of a whole subtree then add up to
I^c_i a_i, and only the composite mass m^c and first moment h^c = m^c c^c of the subtree matter:
    G_i = S_i^T I^c_i [0; -g_i] = S_i^T [-h^c_i x g_i; -m^c_i g_i]   (I [0; v] = [h x v; m v])
    m^c_parent += m^c_i,   h^c_parent += E_i^T h^c_i + m^c_i r_i      (X_i^T I^c_i X_i, first moment)
Outward: one rotation per body; inward: one back-rotation. No rotational inertia is touched.
"""
from numba import int64

from .checks import MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR, vector_status
from .jcalc import joint_transform, subspace_dot
from .model import A_LIN, AXIS, COM_MOMENT, IC_H, IC_M, MASS, X_E, X_R
from .spatial import (accumulate, add, compiled, cross, jit, mat, put, put_mat, rotate,
                      rotate_back, scale, vec)


@jit
def gravity_into(topology, bodies, gravity, ws, q, tau):
    nb = topology.shape[0]
    for i in range(nb):
        parent = topology[i, 0]
        E, r = joint_transform(bodies, topology[i, 1], i, q[i])
        g_parent = (gravity[0], gravity[1], gravity[2]) if parent < 0 else vec(ws, parent, A_LIN)
        put(ws, i, A_LIN, rotate(E, g_parent))       # g_i: gravity in body coordinates
        put_mat(ws, i, X_E, E)
        put(ws, i, X_R, r)
        ws[i, IC_M, 0] = bodies[i, MASS, 0]
        put(ws, i, IC_H, vec(bodies, i, COM_MOMENT))
    for i in range(nb - 1, -1, -1):
        parent = topology[i, 0]
        m, h, g = ws[i, IC_M, 0], vec(ws, i, IC_H), vec(ws, i, A_LIN)
        tau[i] = subspace_dot(topology[i, 1], vec(bodies, i, AXIS), cross(g, h), scale(g, -m))
        if parent >= 0:
            ws[parent, IC_M, 0] += m
            accumulate(ws, parent, IC_H, add(rotate_back(mat(ws, i, X_E), h),
                                             scale(vec(ws, i, X_R), m)))


@compiled(int64(VECTOR, VECTOR, MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR))
def gravity_kernel(q, tau, topology, bodies, gravity, ws):
    status = vector_status(q, topology.shape[0], 1)
    if status == 0:
        gravity_into(topology, bodies, gravity, ws, q, tau)
    return status
