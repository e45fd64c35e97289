"""The public functions: validate, pick the workspace, call one compiled kernel.

Each function tries the kernel with its arguments as given (the fast path for contiguous
float64 vectors); numba answers anything else with TypeError, and only then are the arguments
converted. Lengths and finiteness are checked inside the kernel and reported by name.
`data` is an optional per-thread workspace (Data(model)); the default is the model's own.
"""
import numpy as np

from .batch import crba_batch_kernel, gravity_batch_kernel, rnea_batch_kernel
from .checks import as_batch, as_vector, raise_for_status
from .coriolis import coriolis_into
from .crba import crba_kernel
from .crba_diagonal import crba_diagonal_batch_kernel
from .errors import InputError
from .external import external_forces_array
from .forward_dynamics import SINGULAR, forward_dynamics_kernel
from .gravity import gravity_kernel
from .model import F_ANG, F_LIN, NO_FEXT
from .rnea import rnea_kernel

STATE = ("q", "qd", "qdd")
FD_STATE = ("q", "qd", "tau")


def _vectors(model, names, *values):
    return [as_vector(value, name, model.nq) for name, value in zip(names, values)]


empty = np.empty   # one global look-up per call instead of two


def rnea(model, q, qd, qdd, f_ext=None, data=None):
    """Inverse dynamics: tau = H(q) qdd + C(q, qd) qd + G(q) - sum_k J_k^T f_ext_k.

    f_ext maps link names to [moment; force] in world coordinates about the world origin.
    """
    args = model._kernel_args if data is None else data.kernel_args
    fext = NO_FEXT if f_ext is None else external_forces_array(model, f_ext)
    tau = empty(model.nq)
    try:
        status = rnea_kernel(q, qd, qdd, fext, tau, *args)
    except (TypeError, ValueError):  # not float64 vectors (numba: ValueError for [])
        q, qd, qdd = _vectors(model, STATE, q, qd, qdd)
        status = rnea_kernel(q, qd, qdd, fext, tau, *args)
    if status:
        raise_for_status(status, STATE, model.nq)
    return tau


def joint_forces(model, q, qd, qdd, f_ext=None, data=None):
    """The spatial force [moment; force] each joint transmits to its child body, in that body's
    coordinates (bearing loads), as an (nq, 6) array. tau_i is its projection on S_i."""
    data = model._data if data is None else data
    rnea(model, q, qd, qdd, f_ext, data)
    return data.md[:, F_ANG:F_LIN + 1].reshape(model.nq, 6).copy()


def bias(model, q, qd, data=None):
    """C(q, qd) qd + G(q)."""
    return rnea(model, q, qd, np.zeros(model.nq), None, data)


def gravity(model, q, data=None):
    """G(q), by the gravity-only recursion."""
    args = model._kernel_args if data is None else data.kernel_args
    tau = empty(model.nq)
    try:
        status = gravity_kernel(q, tau, *args)
    except (TypeError, ValueError):  # not float64 vectors (numba: ValueError for [])
        q = as_vector(q, "q", model.nq)
        status = gravity_kernel(q, tau, *args)
    if status:
        raise_for_status(status, STATE, model.nq)
    return tau


def crba(model, q, data=None):
    """The joint-space inertia matrix H(q), full and symmetric."""
    args = model._kernel_args if data is None else data.kernel_args
    H = empty(model._square)
    try:
        status = crba_kernel(q, H, *args)
    except (TypeError, ValueError):  # not float64 vectors (numba: ValueError for [])
        q = as_vector(q, "q", model.nq)
        status = crba_kernel(q, H, *args)
    if status:
        raise_for_status(status, STATE, model.nq)
    return H


def forward_dynamics(model, q, qd, tau, f_ext=None, data=None):
    """qdd = H(q)^-1 (tau - C(q, qd) qd - G(q) + sum_k J_k^T f_ext_k)."""
    data = model._data if data is None else data
    fext = NO_FEXT if f_ext is None else external_forces_array(model, f_ext)
    qdd = empty(model.nq)
    try:
        status = forward_dynamics_kernel(q, qd, tau, fext, qdd, data.H, *data.kernel_args)
    except (TypeError, ValueError):  # not float64 vectors (numba: ValueError for [])
        q, qd, tau = _vectors(model, FD_STATE, q, qd, tau)
        status = forward_dynamics_kernel(q, qd, tau, fext, qdd, data.H, *data.kernel_args)
    if status <= SINGULAR:
        joint = model.joint_names[SINGULAR - status]
        raise InputError(f"the mass matrix H(q) is singular at this q: joint {joint!r} moves a "
                         "subtree with no inertia about its axis (see Model.warnings)")
    if status:
        raise_for_status(status, FD_STATE, model.nq)
    return qdd


def coriolis_matrix(model, q, qd, data=None):
    """C(q, qd) such that C qd = bias - G and Hdot - 2C is skew-symmetric."""
    data = model._data if data is None else data
    q, qd = _vectors(model, STATE, q, qd)
    C = empty(model._square)
    coriolis_into(*data.kernel_args, q, qd, C)
    return C


def batch_states(model, Q, QD, QDD):
    """Q, QD, QDD as (N, nq) finite float64 arrays of one shape; InputError otherwise."""
    Q, QD, QDD = (as_batch(X, name, model.nq) for X, name in zip((Q, QD, QDD), STATE))
    if not Q.shape == QD.shape == QDD.shape:
        raise InputError(f"Q, QD, QDD must have the same shape, got {Q.shape}, {QD.shape}, "
                         f"{QDD.shape}")
    return Q, QD, QDD


def rnea_batch(model, Q, QD, QDD, data=None):
    """rnea over N states: Q, QD, QDD are (N, nq); returns (N, nq)."""
    data = model._data if data is None else data
    Q, QD, QDD = batch_states(model, Q, QD, QDD)
    TAU = np.empty_like(Q)
    rnea_batch_kernel(Q, QD, QDD, NO_FEXT, TAU, *data.kernel_args)
    return TAU


def gravity_batch(model, Q, data=None):
    """gravity over N states: Q is (N, nq); returns (N, nq)."""
    return _vector_per_state(gravity_batch_kernel, model, Q, data)


def crba_diagonal_batch(model, Q, data=None):
    """diag(H(q)) over N states: Q is (N, nq); returns (N, nq). O(N nq) time and memory."""
    return _vector_per_state(crba_diagonal_batch_kernel, model, Q, data)


def _vector_per_state(kernel, model, Q, data):
    """A batch kernel that writes one nq-vector per state of Q."""
    data = model._data if data is None else data
    Q = as_batch(Q, "Q", model.nq)
    out = np.empty_like(Q)
    kernel(Q, out, *data.kernel_args)
    return out


def crba_batch(model, Q, data=None):
    """crba over N states: Q is (N, nq); returns (N, nq, nq)."""
    data = model._data if data is None else data
    Q = as_batch(Q, "Q", model.nq)
    H = empty((Q.shape[0], model.nq, model.nq))
    crba_batch_kernel(Q, H, *data.kernel_args)
    return H
