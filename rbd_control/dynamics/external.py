"""External forces: f_ext maps a link name to [moment; force] in world coordinates, taken about
the world origin (seed 000's  f_i -= iX_0^* f_i^x). A link welded to a body through fixed
joints loads that body; a link on the fixed base loads nothing that moves.
"""
import numpy as np

from .errors import InputError
from .model import F_ANG, F_LIN, W_E, W_R, X_E, X_R
from .spatial import jit


def external_forces_array(model, f_ext) -> np.ndarray:
    """dict link -> 6-vector  =>  (nb, 2, 3) array of world-frame forces per body."""
    if not hasattr(f_ext, "items"):
        raise InputError("f_ext must map link names to 6-vectors [moment; force]")
    fext = np.zeros((model.nq, 2, 3))
    for link, wrench in f_ext.items():
        body = model.link_body.get(link)
        if body is None:
            raise InputError(f"f_ext names unknown link {link!r}")
        try:
            wrench = np.asarray(wrench, dtype=np.float64).reshape(2, 3)
        except (TypeError, ValueError):
            raise InputError(f"f_ext[{link!r}] must be 6 numbers [moment; force]") from None
        if not np.all(np.isfinite(wrench)):
            raise InputError(f"f_ext[{link!r}] contains NaN or inf")
        if body >= 0:
            fext[body] += wrench
    return fext


@jit
def world_transform(topology, i, ws):
    """0X_i = X_i pX_0: E0_i = E_i E0_p, r0_i = r0_p + E0_p^T r_i (parent's already done)."""
    parent = topology[i, 0]
    E, r = ws[i, X_E:X_E + 3], ws[i, X_R]
    E0, r0 = ws[i, W_E:W_E + 3], ws[i, W_R]
    if parent < 0:
        E0[:, :] = E
        r0[:] = r
        return
    Ep, rp = ws[parent, W_E:W_E + 3], ws[parent, W_R]
    for a in range(3):
        for b in range(3):
            E0[a, b] = E[a, 0] * Ep[0, b] + E[a, 1] * Ep[1, b] + E[a, 2] * Ep[2, b]
        r0[a] = rp[a] + Ep[0, a] * r[0] + Ep[1, a] * r[1] + Ep[2, a] * r[2]


@jit
def subtract_external_force(ws, i, wrench):
    """f_i -= iX_0^* f^x = [E0 (n - r0 x f); E0 f]"""
    E0, r0 = ws[i, W_E:W_E + 3], ws[i, W_R]
    n, f = wrench[0], wrench[1]
    m0 = n[0] - (r0[1] * f[2] - r0[2] * f[1])
    m1 = n[1] - (r0[2] * f[0] - r0[0] * f[2])
    m2 = n[2] - (r0[0] * f[1] - r0[1] * f[0])
    for k in range(3):
        ws[i, F_ANG, k] -= E0[k, 0] * m0 + E0[k, 1] * m1 + E0[k, 2] * m2
        ws[i, F_LIN, k] -= E0[k, 0] * f[0] + E0[k, 1] * f[1] + E0[k, 2] * f[2]
