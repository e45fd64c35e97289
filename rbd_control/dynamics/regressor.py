"""The inverse-dynamics regressor: tau = Y(q, qd, qdd) pi, linear in the inertial parameters.

The body force f_i = I_i a_i + v_i x* I_i v_i is linear in the body's inertia (m, h, Ibar), so
its column for parameter k is the same expression with the unit inertia of k (Atkeson, An &
Hollerbach 1986; Pinocchio's bodyRegressor / computeJointTorqueRegressor). Joint j carries the
forces of its whole subtree, so with the transforms and motions of the RNEA's outward pass
(RBDA ch. 5):

    Y[j, 10 i + k] = S_j^T  jX_i^*  f_i(e_k)     for every ancestor-or-self j of body i,

walked from i to the root through f_parent = X_i^T f_i, as in the RNEA's inward pass.
Column order per body is Model.inertial_parameters()'s.
"""
import numpy as np
from numba import int64, void

from rbd_control.dynamics.api import STATE, _vectors, batch_states
from rbd_control.dynamics.checks import (MATRIX, MODEL_ARGS, TENSOR, VECTOR, raise_for_status,
                                         state_status)
from rbd_control.dynamics.jcalc import subspace_dot
from rbd_control.dynamics.model import (A_ANG, A_LIN, NO_FEXT, PARAMETERS_PER_BODY, V_ANG, V_LIN,
                                        X_E, X_R, parent)
from rbd_control.dynamics.rnea import inertia_force, outward_pass
from rbd_control.dynamics.spatial import compiled, jit, mat, transform_force_back, vec

P = PARAMETERS_PER_BODY


@jit
def unit(k, position):
    return 1.0 if k == position else 0.0


@jit
def unit_inertia(k):
    """(m, h, Ibar) with parameter k of (m, hx, hy, hz, xx, xy, yy, xz, yz, zz) one, others 0"""
    h = (unit(k, 1), unit(k, 2), unit(k, 3))
    xx, xy, yy, xz, yz, zz = (unit(k, 4), unit(k, 5), unit(k, 6), unit(k, 7), unit(k, 8),
                              unit(k, 9))
    return unit(k, 0), h, ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))


@jit
def regressor_into(md, q, qd, qdd, Y):
    """Y (nq, 10 nq), zero on entry. The outward pass leaves v_i, a_i (gravity included as
    the base's acceleration) and iX_p in md; its body forces are not used."""
    outward_pass(md, q, qd, qdd, NO_FEXT)
    for i in range(md.shape[0]):
        w, v = vec(md, i, V_ANG), vec(md, i, V_LIN)
        dw, dv = vec(md, i, A_ANG), vec(md, i, A_LIN)
        for k in range(P):
            m, h, Ibar = unit_inertia(k)
            # f_i(e_k) = I(e_k) a_i + v_i x* I(e_k) v_i
            n, f = inertia_force(m, h, Ibar, w, v, dw, dv)
            j = i
            while j >= 0:
                # tau_j = S_j^T f,  f_parent = jX_p^T f
                Y[j, P * i + k] = subspace_dot(md, j, n, f)
                n, f = transform_force_back(mat(md, j, X_E), vec(md, j, X_R), n, f)
                j = parent(md, j)


@compiled(int64(VECTOR, VECTOR, VECTOR, MATRIX, *MODEL_ARGS))
def regressor_kernel(q, qd, qdd, Y, md):
    """inputs: q, qd, qdd; outputs: Y, md. Returns 0 or a checks status code."""
    status = state_status(md.shape[0], q, qd, qdd)
    if status == 0:
        regressor_into(md, q, qd, qdd, Y)
    return status


@compiled(void(MATRIX, MATRIX, MATRIX, TENSOR, *MODEL_ARGS), nogil=True)
def regressor_batch_kernel(Q, QD, QDD, Y, md):
    for s in range(Q.shape[0]):
        regressor_into(md, Q[s], QD[s], QDD[s], Y[s])


def regressor(model, q, qd, qdd, data=None):
    """Y (nq, 10 nq) with rnea(model, q, qd, qdd) == Y @ model.inertial_parameters().

    Y depends on the model's kinematics and gravity only, never on its inertias."""
    data = model._data if data is None else data
    q, qd, qdd = _vectors(model, STATE, q, qd, qdd)
    Y = np.zeros((model.nq, P * model.nq))
    status = regressor_kernel(q, qd, qdd, Y, data.md)
    if status:
        raise_for_status(status, STATE, model.nq)
    return Y


def regressor_batch(model, Q, QD, QDD, data=None):
    """regressor over N states: Q, QD, QDD are (N, nq); returns (N, nq, 10 nq)."""
    data = model._data if data is None else data
    Q, QD, QDD = batch_states(model, Q, QD, QDD)
    Y = np.zeros((Q.shape[0], model.nq, P * model.nq))
    regressor_batch_kernel(Q, QD, QDD, Y, data.md)
    return Y
