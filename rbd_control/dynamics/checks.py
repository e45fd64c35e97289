"""Input validation shared by every public function.

The fast path checks lengths and finiteness inside the compiled kernel (a Python-side check
would cost more than the dynamics); the kernel returns a status code that names the argument,
and `raise_for_status` turns it into an InputError. Anything that is not already a contiguous
float64 vector is converted (and its shape checked) by `as_vector` before a second attempt.
"""
import numpy as np
from numba import types

from .errors import InputError
from .spatial import jit

WRONG_LENGTH = 1
NOT_FINITE = 2

# numba signature pieces
MODEL_DATA = types.float64[:, :, ::1]    # md: body constants, topology, gravity and workspace
MODEL_ARGS = (MODEL_DATA,)               # the types of Data.kernel_args, every kernel's last
VECTOR = types.float64[::1]
MATRIX = types.float64[:, ::1]
TENSOR = types.float64[:, :, ::1]


@jit
def vector_status(x, n, position):
    """0 if x has length n and is finite, else a code naming argument `position` (1-based)."""
    if x.shape[0] != n:
        return 4 * position + WRONG_LENGTH
    for k in range(n):
        if not np.isfinite(x[k]):
            return 4 * position + NOT_FINITE
    return 0


@jit
def state_status(n, q, qd, qdd):
    """First failing code among up to three state vectors (pass q again to skip one)."""
    status = vector_status(q, n, 1)
    if status == 0:
        status = vector_status(qd, n, 2)
    if status == 0:
        status = vector_status(qdd, n, 3)
    return status


def raise_for_status(status, names, n, row=None):
    name = names[status // 4 - 1]
    where = "" if row is None else f" (state {row})"
    if status % 4 == WRONG_LENGTH:
        raise InputError(f"{name}{where} must have length nq = {n}")
    raise InputError(f"{name}{where} contains NaN or inf")


def as_vector(x, name, n):
    try:
        array = np.array(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InputError(f"{name} must be a sequence of {n} numbers: {error}") from None
    if array.ndim != 1 or array.shape[0] != n:
        raise InputError(f"{name} must have length nq = {n}, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} contains NaN or inf")
    return array


def as_batch(X, name, n):
    try:
        array = np.ascontiguousarray(X, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InputError(f"{name} must be an (N, {n}) array of numbers: {error}") from None
    if array.ndim != 2 or array.shape[1] != n:
        raise InputError(f"{name} must have shape (N, nq={n}), got {array.shape}")
    if not np.all(np.isfinite(array)):
        rows = np.flatnonzero(~np.all(np.isfinite(array), axis=1))
        raise InputError(f"{name} contains NaN or inf (first in state {rows[0]})")
    return array
