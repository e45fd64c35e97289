"""Gravity-only recursion (seed 000): with qd = qdd = 0 all velocity terms vanish, so
a_i = X_i a_parent (a_0 = -a_g), f_i = I_i a_i, and the inward pass gives G(q)."""
from numba import int64

from .checks import MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR, vector_status
from .jcalc import store_joint_transform
from .model import A_ANG, A_LIN, COM_MOMENT, F_ANG, F_LIN, IBAR, MASS
from .rnea import base_acceleration, inward_pass
from .spatial import compiled, inertia_times, jit, mat, put, transform_motion, vec


@jit
def gravity_into(topology, bodies, gravity, ws, q, tau):
    for i in range(topology.shape[0]):
        parent = topology[i, 0]
        E, r = store_joint_transform(topology, bodies, ws, i, q[i])
        if parent < 0:
            dw, dv = base_acceleration(E, gravity)
        else:
            dw, dv = transform_motion(E, r, vec(ws, parent, A_ANG), vec(ws, parent, A_LIN))
        n, f = inertia_times(bodies[i, MASS, 0], vec(bodies, i, COM_MOMENT),
                             mat(bodies, i, IBAR), dw, dv)
        put(ws, i, A_ANG, dw)
        put(ws, i, A_LIN, dv)
        put(ws, i, F_ANG, n)
        put(ws, i, F_LIN, f)
    inward_pass(topology, bodies, ws, tau)


@compiled(int64(MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR, VECTOR, VECTOR))
def gravity_kernel(topology, bodies, gravity, ws, q, tau):
    status = vector_status(q, topology.shape[0], 1)
    if status == 0:
        gravity_into(topology, bodies, gravity, ws, q, tau)
    return status
