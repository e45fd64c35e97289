"""Forward dynamics by the composite-rigid-body method (seed 003: qdd = H^-1 (tau - C qd - G)):
RNEA with qdd = 0 gives the bias, CRBA gives H from the same joint transforms, the sparse
L^T D L factorisation solves."""
from numba import int64

from .checks import (MATRIX, MODEL_BODIES, MODEL_INTS, MODEL_VECTOR, TENSOR, VECTOR,
                     state_status)
from .crba import crba_from_transforms
from .ltdl import ltdl, ltdl_solve
from .rnea import rnea_into
from .spatial import compiled

SINGULAR = -1


@compiled(int64(VECTOR, VECTOR, VECTOR, TENSOR, VECTOR, MATRIX, MODEL_INTS, MODEL_BODIES,
                MODEL_VECTOR, TENSOR))
def forward_dynamics_kernel(q, qd, tau, fext, qdd, H, topology, bodies, gravity, ws):
    status = state_status(topology.shape[0], q, qd, tau)
    if status != 0:
        return status
    qdd[:] = 0.0
    rnea_into(topology, bodies, gravity, ws, q, qd, qdd, fext, qdd)   # qdd <- bias
    for k in range(qdd.shape[0]):
        qdd[k] = tau[k] - qdd[k]
    crba_from_transforms(topology, bodies, ws, H)
    if ltdl(topology, H) >= 0:
        return SINGULAR
    ltdl_solve(topology, H, qdd)
    return 0
