"""The public functions: validate, pick the workspace, call one compiled kernel.

A kernel whose one input is q (gravity, crba) is called through its entry point
(spatial.entry_point: no per-call type resolution) when q passes the is_vector test of
checks.py, and with q converted by as_vector otherwise. The others try the kernel with their
arguments as given (the fast path for contiguous float64 vectors; with three input vectors the
dispatcher's own type check costs less than three inlined tests); numba answers anything else
with TypeError, and only then are the arguments converted. Lengths and finiteness are checked
inside the kernel and reported by name. `data` is an optional per-thread workspace
(Data(model)); the default is the model's own.
"""
import numpy as np

from rbd_control.dynamics.batch import crba_batch_kernel, gravity_batch_kernel, rnea_batch_kernel
from rbd_control.dynamics.checks import FLOAT64, as_batch, as_vector, raise_for_status
from rbd_control.dynamics.coriolis import coriolis_into
from rbd_control.dynamics.crba import crba_kernel
from rbd_control.dynamics.crba_diagonal import crba_diagonal_batch_kernel
from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.external import external_forces_array
from rbd_control.dynamics.forward_dynamics import SINGULAR, forward_dynamics_kernel
from rbd_control.dynamics.gravity import gravity_kernel
from rbd_control.dynamics.model import F_ANG, F_LIN, NO_FEXT
from rbd_control.dynamics.momentum import momentum_observer_kernel, momentum_terms_kernel
from rbd_control.dynamics.rnea import rnea_kernel
from rbd_control.dynamics.spatial import entry_point

STATE = ("q", "qd", "qdd")
FD_STATE = ("q", "qd", "tau")


def _vectors(model, names, *values):
    return [as_vector(value, name, model.nq) for name, value in zip(names, values)]


ndarray, empty = np.ndarray, np.empty   # one global look-up per call instead of two


def _of_q(kernel, name, doc, square):
    """The public function of a kernel(q, out, md) whose one input is q; out is a new (nq,)
    array, or (nq, nq) with square."""
    def rebind(code):
        nonlocal call
        call = code

    call = entry_point(kernel, rebind)   # compiles on the first call, then the machine code

    def function(model, q, data=None):
        md = model._md if data is None else data.md
        out = empty(model._square if square else model.nq)
        if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
            q = as_vector(q, "q", model.nq)
        status = call(q, out, md)
        if status:
            raise_for_status(status, STATE, model.nq)
        return out

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


gravity = _of_q(gravity_kernel, "gravity", "G(q), by the gravity-only recursion.", False)
crba = _of_q(crba_kernel, "crba", "The joint-space inertia matrix H(q), full and symmetric.",
             True)


def rnea(model, q, qd, qdd, f_ext=None, data=None):
    """Inverse dynamics: tau = H(q) qdd + C(q, qd) qd + G(q) - sum_k J_k^T f_ext_k.

    f_ext maps link names to [moment; force] in world coordinates about the world origin.
    """
    md = model._md if data is None else data.md
    fext = NO_FEXT if f_ext is None else external_forces_array(model, f_ext)
    tau = empty(model.nq)
    try:
        status = rnea_kernel(q, qd, qdd, fext, tau, md)
    except (TypeError, ValueError):  # not float64 vectors (numba: ValueError for [])
        q, qd, qdd = _vectors(model, STATE, q, qd, qdd)
        status = rnea_kernel(q, qd, qdd, fext, tau, md)
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


def forward_dynamics(model, q, qd, tau, f_ext=None, data=None):
    """qdd = H(q)^-1 (tau - C(q, qd) qd - G(q) + sum_k J_k^T f_ext_k)."""
    data = model._data if data is None else data
    fext = NO_FEXT if f_ext is None else external_forces_array(model, f_ext)
    qdd = empty(model.nq)
    try:
        status = forward_dynamics_kernel(q, qd, tau, fext, qdd, data.H, data.md)
    except (TypeError, ValueError):  # not float64 vectors (numba: ValueError for [])
        q, qd, tau = _vectors(model, FD_STATE, q, qd, tau)
        status = forward_dynamics_kernel(q, qd, tau, fext, qdd, data.H, data.md)
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
    coriolis_into(data.md, q, qd, C)
    return C


_momentum_terms = entry_point(  # rebound to the machine code on the first call
    momentum_terms_kernel, lambda code: globals().update(_momentum_terms=code))


def momentum_terms(model, q, qd, out=None, data=None):
    """The model side of a momentum observer, one O(n) pass (momentum.py): a (3, nq) array
    with rows p = H(q) qd, C(q, qd)^T qd and G(q). `out`, a C-contiguous (3, nq) float64 array,
    is filled and returned instead of a new one (no allocation on a 1 kHz path)."""
    md = model._md if data is None else data.md
    if out is None:
        out = empty((3, model.nq))
    elif out.__class__ is not ndarray or out.dtype is not FLOAT64 or out.shape != (3, model.nq) \
            or not out.flags.c_contiguous:
        raise InputError(f"out must be a C-contiguous float64 array of shape (3, {model.nq})")
    if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
        q = as_vector(q, "q", model.nq)
    if qd.__class__ is not ndarray or qd.dtype is not FLOAT64 or qd.ndim != 1:
        qd = as_vector(qd, "qd", model.nq)
    status = _momentum_terms(q, qd, out, md)
    if status:
        raise_for_status(status, STATE, model.nq)
    return out


OBSERVER_ARGS = ("q", "qd", "tau", "s, r and terms")


def momentum_observer_step(model, q, qd, tau, gain, dt, s, r, terms, data=None):
    """One step of the generalized momentum observer (momentum.py), in place, one compiled
    call: with tau the torque that acted over the last dt seconds,
        s = (s + (tau + C^T qd - g) dt + gain dt p) / (1 + gain dt),   r = gain (p - s)
    s (nq,) the baseline p(0) + integral, r (nq,) the residual (-> tau_ext, time constant
    1/gain), terms (3, nq) receives momentum_terms; all three float64, C-contiguous, owned by
    the caller. gain > 0 (1/s) and dt > 0 (s) are not checked here (the caller's job)."""
    md = model._md if data is None else data.md
    gain, dt = float(gain), float(dt)
    try:
        status = momentum_observer_kernel(q, qd, tau, gain, dt, s, r, terms, md)
    except (TypeError, ValueError):  # not float64 vectors: convert the state and retry once
        q, qd, tau = _vectors(model, ("q", "qd", "tau"), q, qd, tau)
        try:
            status = momentum_observer_kernel(q, qd, tau, gain, dt, s, r, terms, md)
        except (TypeError, ValueError):
            raise InputError("s and r must be float64 vectors and terms a C-contiguous float64 "
                             f"(3, {model.nq}) array") from None
    if status:
        raise_for_status(status, OBSERVER_ARGS, model.nq)
    return r


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
    rnea_batch_kernel(Q, QD, QDD, NO_FEXT, TAU, data.md)
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
    kernel(Q, out, data.md)
    return out


def crba_batch(model, Q, data=None):
    """crba over N states: Q is (N, nq); returns (N, nq, nq)."""
    data = model._data if data is None else data
    Q = as_batch(Q, "Q", model.nq)
    H = empty((Q.shape[0], model.nq, model.nq))
    crba_batch_kernel(Q, H, data.md)
    return H
