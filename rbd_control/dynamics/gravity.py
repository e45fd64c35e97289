"""Gravity-only recursion (seed 000): with qd = qdd = 0 all velocity terms vanish, so
a_i = X_i a_parent (a_0 = -a_g), f_i = I_i a_i, and the inward pass gives G(q)."""
from numba import int64

from .checks import MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR, vector_status
from .jcalc import joint_transform
from .model import A_ANG, A_LIN, COM_MOMENT, F_ANG, F_LIN, IBAR, MASS, X_E, X_R
from .rnea import inward_pass
from .spatial import compiled, inertia_times, jit, rotate, transform_motion


@jit
def gravity_into(topology, bodies, gravity, ws, q, tau):
    for i in range(topology.shape[0]):
        parent = topology[i, 0]
        joint_transform(bodies, topology[i, 1], i, q[i], ws)
        E, r = ws[i, X_E:X_E + 3], ws[i, X_R]
        dw, dv = ws[i, A_ANG], ws[i, A_LIN]
        if parent < 0:
            dw[:] = 0.0
            rotate(E, gravity, dv)
            dv *= -1.0
        else:
            transform_motion(E, r, ws[parent, A_ANG], ws[parent, A_LIN], dw, dv)
        inertia_times(bodies[i, MASS, 0], bodies[i, COM_MOMENT], bodies[i, IBAR:IBAR + 3],
                      dw, dv, ws[i, F_ANG], ws[i, F_LIN])
    inward_pass(topology, bodies, ws, tau)


@compiled(int64(MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR, VECTOR, VECTOR))
def gravity_kernel(topology, bodies, gravity, ws, q, tau):
    status = vector_status(q, topology.shape[0], 1)
    if status == 0:
        gravity_into(topology, bodies, gravity, ws, q, tau)
    return status
