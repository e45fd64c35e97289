"""External forces: f_ext maps a link name to [moment; force] in world coordinates, taken about
the world origin; the RNEA subtracts iX_0^* f^x_i from body i's force (RBDA (Featherstone 2008)
eq. 5.20). A link welded to a body through fixed
joints loads that body; a link on the fixed base loads nothing that moves.
"""
import numpy as np

from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.model import W_E, W_R, parent
from rbd_control.dynamics.spatial import (add, cross, jit, mat, mat_mul, put, put_mat, rotate,
                                          rotate_back, sub, vec)


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
def world_transform(md, i, E, r):
    """Store and return 0X_i = X_i pX_0: E0 = E E0_p, r0 = r0_p + E0_p^T r."""
    p = parent(md, i)
    if p < 0:
        E0, r0 = E, r
    else:
        E0_p, r0_p = mat(md, p, W_E), vec(md, p, W_R)
        E0, r0 = mat_mul(E, E0_p), add(r0_p, rotate_back(E0_p, r))
    put_mat(md, i, W_E, E0)
    put(md, i, W_R, r0)
    return E0, r0


@jit
def external_force_in_body(E0, r0, fext, i):
    """iX_0^* f^x = [E0 (n - r0 x f); E0 f]"""
    n = (fext[i, 0, 0], fext[i, 0, 1], fext[i, 0, 2])
    f = (fext[i, 1, 0], fext[i, 1, 1], fext[i, 1, 2])
    return rotate(E0, sub(n, cross(r0, f))), rotate(E0, f)
