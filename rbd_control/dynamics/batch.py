"""Whole trajectories in one call: N states through the single-state algorithms inside one
compiled loop, so Python and dispatch costs are paid once. Inputs are validated by the caller
(one vectorised numpy check over the whole batch)."""
from .checks import MATRIX, MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR
from .crba import crba_into
from .gravity import gravity_into
from .rnea import rnea_into
from .spatial import compiled
from numba import void


@compiled(void(MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR, MATRIX, MATRIX, MATRIX, TENSOR,
               MATRIX))
def rnea_batch_kernel(topology, bodies, gravity, ws, Q, QD, QDD, fext, TAU):
    for k in range(Q.shape[0]):
        rnea_into(topology, bodies, gravity, ws, Q[k], QD[k], QDD[k], fext, TAU[k])


@compiled(void(MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR, MATRIX, MATRIX))
def gravity_batch_kernel(topology, bodies, gravity, ws, Q, G):
    for k in range(Q.shape[0]):
        gravity_into(topology, bodies, gravity, ws, Q[k], G[k])


@compiled(void(MODEL_INTS, MODEL_BODIES, TENSOR, MATRIX, TENSOR))
def crba_batch_kernel(topology, bodies, ws, Q, H):
    for k in range(Q.shape[0]):
        crba_into(topology, bodies, ws, Q[k], H[k])
