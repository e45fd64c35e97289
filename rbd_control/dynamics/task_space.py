"""The public task-space functions: validate, look the link up, call one compiled kernel.

Same pattern as api.py: q goes to the kernel's entry point as given when it passes the
is_vector test of checks.py (the other functions: to the kernel, converted on its TypeError);
lengths and finiteness are checked in the kernel.
Conventions: a pose is the 4 x 4 world <- link transform; a Jacobian is 6 x nq and maps qd to
[omega; v] in world axes, v being the velocity of the link origin or of `point` (link
coordinates): Pinocchio's LOCAL_WORLD_ALIGNED with the angular rows first.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rbd_control.dynamics.checks import FLOAT64, as_batch, as_vector, raise_for_status
from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.frame_wrench import frame_wrench_kernel
from rbd_control.dynamics.kinematics import (FRAME_BODY, FRAME_POINT, FRAME_ROWS,
                                             frame_bias_acceleration_kernel,
                                             frame_jacobian_kernel, frame_pose_batch_kernel,
                                             frame_pose_kernel)
from rbd_control.dynamics.operational_space import SINGULAR, operational_space_kernel
from rbd_control.dynamics.spatial import entry_point

Q = ("q",)
STATE = ("q", "qd")
POSE = (4, 4)
ndarray, empty = np.ndarray, np.empty   # one global look-up per call instead of two


def _global(name):
    """entry_point's rebind: the module global `name` becomes the kernel's machine code."""
    return lambda code: globals().update({name: code})


pose_entry = entry_point(frame_pose_kernel, _global("pose_entry"))
jacobian_entry = entry_point(frame_jacobian_kernel, _global("jacobian_entry"))
operational_space_entry = entry_point(operational_space_kernel, _global("operational_space_entry"))
wrench_entry = entry_point(frame_wrench_kernel, _global("wrench_entry"))
TAU = ("q", "tau")


def link_frames(model) -> dict:
    """link name -> (body, F) with F = [E_l; r_l; (body, 0, 0); 0] (6 x 3, kinematics.py: the
    frame at the link origin; never written), built once per model and kept on it as
    `_link_frames` (like its default workspace `_data`); `_jacobian_args` maps the name to
    what frame_jacobian passes on, (F, J's shape, the model's md), in one look-up."""
    frames = {}
    for link, (E, r) in model.link_placement.items():
        F = np.zeros((FRAME_ROWS, 3))
        F[:3], F[3], F[FRAME_BODY, 0] = E, r, model.link_body[link]
        frames[link] = (int(model.link_body[link]), F)
    shape = (6, model.nq)
    object.__setattr__(model, "_jacobian_args",
                       {link: (F, shape, model._md) for link, (_, F) in frames.items()})
    object.__setattr__(model, "_link_frames", frames)
    return frames


def _frame(model, link):
    try:
        return model._link_frames[link]   # the fast path: one attribute, one dict look-up
    except AttributeError:   # first call on this model
        link_frames(model)
        return _frame(model, link)
    except (KeyError, TypeError):
        raise InputError(f"link {link!r} is not a link of {model.name!r} "
                         f"(links: {', '.join(model.link_names)})") from None


def _at_point(F, point):
    """F with `point` (link coordinates) in its point row: F itself for None, else a copy."""
    if point is None:
        return F
    p = np.array(point, dtype=float) if np.ndim(point) == 1 else None
    if p is None or p.shape != (3,) or not np.all(np.isfinite(p)):
        raise InputError(f"point must be 3 finite numbers (link coordinates), got {point!r}")
    F = F.copy()
    F[FRAME_POINT] = p
    return F


def frame_pose(model, q, link) -> np.ndarray:
    """The 4 x 4 homogeneous transform world <- link at q."""
    F = _frame(model, link)[1]
    T = empty(POSE)
    if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
        q = as_vector(q, "q", model.nq)
    status = pose_entry(q, F, T, model._md)
    if status:
        raise_for_status(status, Q, model.nq)
    return T


def frame_pose_batch(model, Q_batch, link) -> np.ndarray:
    """frame_pose over N states: Q_batch is (N, nq); returns (N, 4, 4)."""
    F = _frame(model, link)[1]
    Q_batch = as_batch(Q_batch, "Q", model.nq)
    T = np.empty((Q_batch.shape[0], 4, 4))
    frame_pose_batch_kernel(Q_batch, F, T, model._md)
    return T


def frame_jacobian(model, q, link, point=None) -> np.ndarray:
    """6 x nq: qd -> [omega; v] of the link (v of its origin, or of `point` in link
    coordinates), world axes."""
    try:
        F, shape, md = model._jacobian_args[link]   # _frame's fast path, without its call
    except (AttributeError, KeyError, TypeError):
        _frame(model, link)   # builds the tables on a model's first call; InputError: bad link
        F, shape, md = model._jacobian_args[link]
    if point is not None:
        F = _at_point(F, point)
    J = empty(shape)
    if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
        q = as_vector(q, "q", model.nq)
    if status := jacobian_entry(q, F, J, md):
        raise_for_status(status, Q, model.nq)
    return J


class FrameJacobian:
    """frame_jacobian at one link (and point), prepared once: the link and point checked and J
    allocated, so that a per-state caller (a control loop) pays one compiled call and no
    allocation. Calling it with q returns the one reused (6, nq) array J, overwritten by the
    next call (copy it to keep it); not to be shared between threads."""

    def __init__(self, model, link, point=None):
        self.model, self.link = model, link
        self._F = _at_point(_frame(model, link)[1], point)
        self._md = model._md   # only read by the kernel, so the model's own workspace serves
        self.J = empty((6, model.nq))

    def __call__(self, q) -> np.ndarray:
        if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
            q = as_vector(q, "q", self.model.nq)
        status = jacobian_entry(q, self._F, self.J, self._md)
        if status:
            raise_for_status(status, Q, self.model.nq)
        return self.J


def frame_velocity(model, q, qd, link, point=None) -> np.ndarray:
    """[omega; v] of the link (of `point`) in world axes: J(q) qd."""
    qd = as_vector(qd, "qd", model.nq)
    return frame_jacobian(model, q, link, point) @ qd


def frame_bias_acceleration(model, q, qd, link, point=None, data=None) -> np.ndarray:
    """Jdot qd = [dw; a]: the link's classical acceleration at qdd = 0, world axes."""
    data = model._data if data is None else data
    F = _at_point(_frame(model, link)[1], point)
    out = np.empty(6)
    args = (F, out, data.md)
    try:
        status = frame_bias_acceleration_kernel(q, qd, *args)
    except (TypeError, ValueError):  # not float64 vectors
        q, qd = (as_vector(x, name, model.nq) for x, name in zip((q, qd), STATE))
        status = frame_bias_acceleration_kernel(q, qd, *args)
    if status:
        raise_for_status(status, STATE, model.nq)
    return out


class OperationalSpace(NamedTuple):
    """Lambda (6 x 6) of a link frame and what it was made of."""

    Lambda: np.ndarray    # (J H^-1 J^T)^-1, damped near singularities
    damping: float        # mu added to the eigenvalues of J H^-1 J^T; 0 = exact
    J: np.ndarray         # 6 x nq frame Jacobian (world axes, [omega; v])
    Hinv_JT: np.ndarray   # nq x 6: H^-1 J^T (the dynamically consistent inverse is this @ Lambda)


def operational_space_inertia(model, q, link, point=None, rcond=1e-6,
                              data=None) -> OperationalSpace:
    """Lambda = (J H^-1 J^T)^-1 of the link frame through the sparse L^T D L of H.

    Eigenvalues s of J H^-1 J^T below eps = rcond * s_max are damped (see operational_space.py);
    the result says by how much. A link that no joint moves has no operational space."""
    data = model._data if data is None else data
    body, F = _frame(model, link)
    F = _at_point(F, point)
    if body < 0:
        raise InputError(f"link {link!r} is fixed to the base: no joint moves it")
    if not (np.isfinite(rcond) and 0.0 < rcond < 1.0):
        raise InputError(f"rcond must be in (0, 1), got {rcond!r}")
    n = model.nq
    J, Y, Lambda, damping = empty((6, n)), empty((6, n)), empty((6, 6)), empty(1)
    if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
        q = as_vector(q, "q", n)
    status = operational_space_entry(q, F, float(rcond), J, Y, Lambda, damping, data.H, data.md)
    if status == SINGULAR:
        raise InputError("the mass matrix H(q) is singular at this q")
    if status:
        raise_for_status(status, Q, n)
    return OperationalSpace(Lambda, float(damping[0]), J, Y.T)


class FrameWrench:
    """F = (J J^T + damping^2 1)^-1 J tau at one link (frame_wrench.py), prepared once: the
    link, point and damping checked and the buffers allocated, so that a 1 kHz caller pays one
    compiled call per state. Calling it returns the one reused (6,) array [moment; force] (world
    axes, at the link origin or `point`)."""

    def __init__(self, model, link, damping, point=None):
        if not (isinstance(damping, (int, float)) and np.isfinite(damping) and damping > 0.0):
            raise InputError(f"damping must be a positive finite number, got {damping!r}")
        self.model, self.link, self.damping = model, link, float(damping)
        self._F = _at_point(_frame(model, link)[1], point)
        self._damping2 = self.damping ** 2
        self._J, self._A, self.wrench = empty((6, model.nq)), empty((6, 6)), empty(6)

    def __call__(self, q, tau) -> np.ndarray:
        n = self.model.nq
        if q.__class__ is not ndarray or q.dtype is not FLOAT64 or q.ndim != 1:
            q = as_vector(q, "q", n)
        if tau.__class__ is not ndarray or tau.dtype is not FLOAT64 or tau.ndim != 1:
            tau = as_vector(tau, "tau", n)
        status = wrench_entry(q, self._F, tau, self._damping2, self._J, self._A, self.wrench,
                              self.model._md)
        if status:
            raise_for_status(status, TAU, n)
        return self.wrench


def frame_wrench(model, q, link, tau, damping, point=None) -> np.ndarray:
    """F = (J J^T + damping^2 1)^-1 J tau: the wrench [moment; force] at the link origin (or
    `point`), world axes, whose J^T F best explains the joint torques tau (damped least squares,
    frame_wrench.py). damping > 0 (the lambda of J J^T + lambda^2 1), in the units of J."""
    return FrameWrench(model, link, damping, point)(q, tau)
