"""Whole trajectories in one call: N states through the single-state algorithms inside one
compiled loop, so Python and dispatch costs are paid once. Inputs are validated by the caller
(one vectorised numpy check over the whole batch)."""
from numba import void

from rbd_control.dynamics.checks import MATRIX, MODEL_ARGS, TENSOR
from rbd_control.dynamics.crba import crba_into
from rbd_control.dynamics.gravity import gravity_into
from rbd_control.dynamics.rnea import rnea_into
from rbd_control.dynamics.spatial import compiled


@compiled(void(MATRIX, MATRIX, MATRIX, TENSOR, MATRIX, *MODEL_ARGS), nogil=True)
def rnea_batch_kernel(Q, QD, QDD, fext, TAU, md):
    for k in range(Q.shape[0]):
        rnea_into(md, Q[k], QD[k], QDD[k], fext, TAU[k])


@compiled(void(MATRIX, MATRIX, *MODEL_ARGS), nogil=True)
def gravity_batch_kernel(Q, G, md):
    for k in range(Q.shape[0]):
        gravity_into(md, Q[k], G[k])


@compiled(void(MATRIX, TENSOR, *MODEL_ARGS), nogil=True)
def crba_batch_kernel(Q, H, md):
    for k in range(Q.shape[0]):
        crba_into(md, Q[k], H[k])
