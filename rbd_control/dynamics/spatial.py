"""Spatial-vector algebra (Featherstone ch. 2) on 3-tuples, compiled with numba.

3-vectors are tuples (x, y, z) and 3x3 matrices tuples of rows: plain values that live in
registers. Array views would cost an atomic reference-count update each, which dominated the
kernels; so state lives in the packed arrays and is read with `vec`/`mat`, written with `put`.

A Plücker transform X = (E, r) maps coordinates from frame A to frame B: E rotates A
coordinates into B and r is B's origin in A coordinates:
    X m   = [E w;  E (v - r x w)]              motion m = [w; v]
    X^T f = [E^T n + r x E^T f;  E^T f]        force  f = [n; f], from B back to A
A spatial inertia is kept compact as (m, h, Ibar): mass, first moment h = m c, and rotational
inertia about the frame origin, so I [w; v] = [Ibar w + h x v;  m v - h x w].
"""
import threading

from numba import njit

jit = njit(cache=True, nogil=True, inline="always")

ZERO = (0.0, 0.0, 0.0)


def compiled(*signatures, nogil=False, allocates=False):
    """An entry-point kernel with explicit signatures, compiled (or loaded from the on-disk
    cache) on its first call, not at import: a process compiles only the kernels it calls
    (a joint-space controller's first state needs 4-6 of the 20). A call with any other argument
    types fails fast with TypeError instead of compiling a new specialisation.

    A single-state kernel keeps the GIL: releasing and retaking it costs ~45 ns of a ~1 µs
    call, and retaking it while another Python thread runs waits for that thread's switch
    interval (sys.getswitchinterval(), 5 ms by default). Batch kernels, whose calls are long,
    pass nogil=True so that other threads run meanwhile.

    A kernel that allocates no array itself is compiled without numba's reference-counting
    runtime (NRT, the `_nrt` compiler flag): its wrapper then unboxes each array argument
    as a plain view instead of wrapping it in a new NRT MemInfo (a malloc, then a free and
    atomic reference counts on return), ~20 ns less per array argument, 0.08 µs of a
    4-array call. A kernel that makes an array (np.zeros, np.linalg) says allocates=True."""
    def lazy(function):
        kernel = njit(cache=True, nogil=nogil, _nrt=allocates)(function)
        kernel.declared_signatures = signatures

        def compile_for_args(*args, **kws):
            # numba's dispatcher calls this when no compiled signature matches the arguments,
            # then calls what it returns with them: compile the declared signatures (and no
            # other) and return the dispatcher itself, which dispatches again (TypeError if
            # the arguments still match none). The kernel runs once.
            return compile_declared(kernel)

        kernel._compile_for_args = compile_for_args
        KERNELS.append(kernel)
        return kernel
    return lazy


KERNELS = []                  # every kernel made by compiled(), in import order
_COMPILING = threading.Lock()


def compile_declared(kernel):
    """Compile (or load from the cache) a kernel's declared signatures, once, then refuse any
    other: numba's explicit-signature behaviour, moved from import to first use."""
    with _COMPILING:
        if kernel._can_compile:
            for signature in kernel.declared_signatures:
                kernel.compile(signature)
            kernel.disable_compile()
    return kernel


def compile_all():
    """Compile every kernel of the modules imported so far (rbd_control.dynamics.compile_kernels
    imports them all first)."""
    for kernel in KERNELS:
        compile_declared(kernel)


def entry_point(kernel, rebind):
    """The machine code of a one-signature kernel, called without the dispatcher's per-call
    type resolution (numba's Dispatcher.get_overload): ~0.1 µs less per call.

    What it returns compiles the kernel on its first call and hands the machine code to
    rebind(code), which stores it where the wrapper reads it (a module global, a closure
    cell), so that later calls go straight to the machine code.

    It checks no argument type (numba's unboxing compares only item sizes, so an int64 array
    would be read as float64): call it only with arrays made here and with user vectors that
    passed the is_vector test of checks.py."""
    def first_call(*args):
        (signature,) = compile_declared(kernel).signatures
        code = kernel.get_overload(signature)
        rebind(code)
        return code(*args)
    return first_call


@jit
def vec(A, i, row):
    return (A[i, row, 0], A[i, row, 1], A[i, row, 2])


@jit
def mat(A, i, row):
    return (vec(A, i, row), vec(A, i, row + 1), vec(A, i, row + 2))


@jit
def put(A, i, row, x):
    A[i, row, 0], A[i, row, 1], A[i, row, 2] = x[0], x[1], x[2]


@jit
def put_mat(A, i, row, M):
    put(A, i, row, M[0])
    put(A, i, row + 1, M[1])
    put(A, i, row + 2, M[2])


@jit
def accumulate(A, i, row, x):
    A[i, row, 0] += x[0]
    A[i, row, 1] += x[1]
    A[i, row, 2] += x[2]


@jit
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@jit
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def rotate(E, x):
    """E x"""
    return (dot(E[0], x), dot(E[1], x), dot(E[2], x))


@jit
def rotate_back(E, x):
    """E^T x"""
    return (E[0][0] * x[0] + E[1][0] * x[1] + E[2][0] * x[2],
            E[0][1] * x[0] + E[1][1] * x[1] + E[2][1] * x[2],
            E[0][2] * x[0] + E[1][2] * x[1] + E[2][2] * x[2])


@jit
def mat_mul(A, B):
    """A B, rows of A times B"""
    return (rotate_back(B, A[0]), rotate_back(B, A[1]), rotate_back(B, A[2]))


@jit
def transform_motion(E, r, w, v):
    """X [w; v]"""
    return rotate(E, w), rotate(E, sub(v, cross(r, w)))


@jit
def transform_force_back(E, r, n, f):
    """X^T [n; f]: a force in B coordinates expressed in A coordinates."""
    f_a = rotate_back(E, f)
    return add(rotate_back(E, n), cross(r, f_a)), f_a


@jit
def inertia_times(m, h, Ibar, w, v):
    """I [w; v]"""
    return add(rotate(Ibar, w), cross(h, v)), sub(scale(v, m), cross(h, w))


@jit
def cross_motion(w, v, w2, v2):
    """[w; v] x [w2; v2] = [w x w2;  w x v2 + v x w2]"""
    return cross(w, w2), add(cross(w, v2), cross(v, w2))


@jit
def cross_force(w, v, n, f):
    """[w; v] x* [n; f] = [w x n + v x f;  w x f]"""
    return add(cross(w, n), cross(v, f)), cross(w, f)


@jit
def spatial_dot(w, v, n, f):
    """[w; v]^T [n; f], a motion paired with a force"""
    return dot(w, n) + dot(v, f)


@jit
def transpose(E):
    return ((E[0][0], E[1][0], E[2][0]), (E[0][1], E[1][1], E[2][1]),
            (E[0][2], E[1][2], E[2][2]))


@jit
def symmetric(a00, a01, a02, a11, a12, a22):
    return (a00, a01, a02), (a01, a11, a12), (a02, a12, a22)


@jit
def inertia_back(E, r, m, h, Ibar):
    """X^T I X: a compact inertia (m, h, Ibar) in B coordinates, expressed in A coordinates.

    With y = E^T h:  h_A = y + m r,
    Ibar_A = E^T Ibar E - y r^T - r h_A^T + (2 r.y + m |r|^2) 1   (parallel axes, rotated);
    Ibar_A is symmetric, so only its upper triangle is computed.
    """
    y = rotate_back(E, h)
    h_A = add(y, scale(r, m))
    d = 2.0 * dot(r, y) + m * dot(r, r)
    e, b = transpose(E), transpose(mat_mul(Ibar, E))   # columns of E and of Ibar E

    # (E^T Ibar E)_kl - y_k r_l - r_k h_A,l
    def entry(k, l):
        return dot(e[k], b[l]) - y[k] * r[l] - r[k] * h_A[l]
    return h_A, symmetric(entry(0, 0) + d, entry(0, 1), entry(0, 2), entry(1, 1) + d,
                          entry(1, 2), entry(2, 2) + d)
