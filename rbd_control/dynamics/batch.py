"""Whole trajectories in one call: N states through the single-state algorithms inside one
compiled loop, so Python and dispatch costs are paid once. Inputs are validated by the caller
(one vectorised numpy check over the whole batch)."""
from numba import void

from .checks import MATRIX, MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR
from .crba import crba_into
from .gravity import gravity_into
from .rnea import rnea_into
from .spatial import compiled

MODEL_AND_WORKSPACE = (MODEL_INTS, MODEL_BODIES, MODEL_VECTOR, TENSOR)


@compiled(void(MATRIX, MATRIX, MATRIX, TENSOR, MATRIX, *MODEL_AND_WORKSPACE))
def rnea_batch_kernel(Q, QD, QDD, fext, TAU, topology, bodies, gravity, ws):
    for k in range(Q.shape[0]):
        rnea_into(topology, bodies, gravity, ws, Q[k], QD[k], QDD[k], fext, TAU[k])


@compiled(void(MATRIX, MATRIX, *MODEL_AND_WORKSPACE))
def gravity_batch_kernel(Q, G, topology, bodies, gravity, ws):
    for k in range(Q.shape[0]):
        gravity_into(topology, bodies, gravity, ws, Q[k], G[k])


@compiled(void(MATRIX, TENSOR, *MODEL_AND_WORKSPACE))
def crba_batch_kernel(Q, H, topology, bodies, gravity, ws):
    for k in range(Q.shape[0]):
        crba_into(topology, bodies, ws, Q[k], H[k])
