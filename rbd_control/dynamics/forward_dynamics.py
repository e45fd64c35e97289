"""Forward dynamics by the composite-rigid-body method, RBDA (Featherstone 2008) ch. 6:
qdd = H^-1 (tau - C qd - G). RNEA with qdd = 0 gives the bias C qd + G, the CRBA gives H from the
same joint transforms, the sparse L^T D L factorisation (§6.5) solves. MuJoCo's forward
dynamics takes the same steps (mj_rne, mj_crb, mj_factorM, mj_solveM); Pinocchio's aba computes
the same qdd by the articulated-body algorithm (RBDA §7.3, Table 7.1)."""
import numpy as np
from numba import int64

from rbd_control.dynamics.checks import MATRIX, MODEL_ARGS, TENSOR, VECTOR, state_status
from rbd_control.dynamics.crba import crba_from_transforms
from rbd_control.dynamics.ltdl import ltdl, ltdl_solve
from rbd_control.dynamics.rnea import rnea_into
from rbd_control.dynamics.spatial import compiled

SINGULAR = -1    # status SINGULAR - k: H has a zero pivot (or qdd overflows) at joint k


@compiled(int64(VECTOR, VECTOR, VECTOR, TENSOR, VECTOR, MATRIX, *MODEL_ARGS))
def forward_dynamics_kernel(q, qd, tau, fext, qdd, H, md):
    """inputs: q, qd, tau, fext; outputs: qdd, H (factorised), md.
    Returns 0, SINGULAR - k (H singular at joint k) or a checks status code."""
    status = state_status(md.shape[0], q, qd, tau)
    if status != 0:
        return status
    # qdd <- C qd + G - J^T f_ext  (RNEA with qdd = 0)
    qdd[:] = 0.0
    rnea_into(md, q, qd, qdd, fext, qdd)   # qdd <- bias
    # qdd <- tau - (C qd + G - J^T f_ext)
    for k in range(qdd.shape[0]):
        qdd[k] = tau[k] - qdd[k]
    # H = L^T D L,  qdd <- H^-1 qdd
    crba_from_transforms(md, H)
    pivot = ltdl(md, H)
    if pivot >= 0:
        return SINGULAR - pivot
    ltdl_solve(md, H, qdd)
    for k in range(qdd.shape[0]):
        if not np.isfinite(qdd[k]):   # a pivot so small that H^-1 overflows
            return SINGULAR - k
    return 0
