"""Input validation shared by every public function.

The fast path checks lengths and finiteness inside the compiled kernel (a Python-side check
would cost more than the dynamics); the kernel returns a status code that names the argument,
and `raise_for_status` turns it into an InputError. Anything that is not already a contiguous
float64 vector is converted (and its shape checked) by `as_vector` before a second attempt.
"""
import numpy as np
from numba import types

from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.spatial import jit

WRONG_LENGTH = 1
NOT_FINITE = 2

# numba signature pieces
MODEL_DATA = types.float64[:, :, ::1]    # md: body constants, topology, gravity and workspace
MODEL_ARGS = (MODEL_DATA,)               # the type of md, every kernel's last argument
VECTOR = types.float64[::1]
INPUT = types.float64[:]                 # q of a kernel called through its entry point: any stride
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
def checked(algorithm, q, out, md):
    """algorithm(md, q, out) when q has length nb and is finite: the body of every kernel whose
    one input is q. Returns 0 or the status code."""
    status = vector_status(q, md.shape[0], 1)
    if status == 0:
        algorithm(md, q, out)
    return status


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


# A user vector x may go to a kernel's entry point (spatial.entry_point, which checks no
# types) only if it passes the is_vector test
#     x.__class__ is ndarray and x.dtype is FLOAT64 and x.ndim == 1
# (a float64 vector, any stride: the kernel types it INPUT; its length and finiteness are
# checked in the kernel), and is converted by as_vector otherwise. The wrappers inline the
# test: a call would cost as much as the entry point saves.
FLOAT64 = np.dtype(np.float64)


def as_vector(x, name, n):
    """x as a float64 vector of length n with finite entries; InputError naming `name`."""
    return as_floats(x, name, n, batch=False)


def as_batch(X, name, n):
    """X as a C-contiguous (N, n) float64 array with finite entries; InputError naming
    `name` (and the first bad state)."""
    return as_floats(X, name, n, batch=True)


def as_floats(x, name, n, batch):
    # C-contiguous and writable, as the compiled signatures take them (a read-only array is
    # copied: the kernels refuse it as it is)
    shape = f"(N, nq={n})" if batch else f"length nq = {n}"
    try:
        array = np.asarray(x, dtype=np.float64, order="C")
    except (TypeError, ValueError) as error:
        raise InputError(f"{name} must be {'an array of shape' if batch else 'a sequence of'} "
                         f"{shape} numbers: {error}") from None
    if array.ndim != 1 + batch or array.shape[-1] != n:
        raise InputError(f"{name} must have {'shape ' if batch else ''}{shape}, got shape "
                         f"{array.shape}")
    if not array.flags.writeable:
        array = array.copy()
    finite = np.isfinite(array)
    if not np.all(finite):
        where = (f" (first in state {np.flatnonzero(~np.all(finite, axis=1))[0]})" if batch
                 else "")
        raise InputError(f"{name} contains NaN or inf{where}")
    return array
