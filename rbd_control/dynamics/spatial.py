"""Spatial-vector algebra on 3-vector rows (Featherstone ch. 2), compiled with numba.

A Plücker transform X = (E, r) maps coordinates from frame A to frame B, where E rotates A
coordinates into B and r is B's origin in A coordinates:
    X m   = [E w;  E (v - r x w)]              motion m = [w; v]
    X^T f = [E^T n + r x E^T f;  E^T f]        force  f = [n; f], from B back to A
A spatial inertia is kept compact as (m, h, Ibar): mass, first moment h = m c, and rotational
inertia about the frame origin, so I [w; v] = [Ibar w + h x v;  m v - h x w].
Every function writes into caller-owned arrays: the hot paths allocate nothing.
"""
from numba import njit

jit = njit(cache=True, nogil=True)


def compiled(*signatures):
    """An entry-point kernel with explicit signatures: compiled (or loaded from the on-disk
    cache) at import, and a call with any other argument types fails fast with TypeError
    instead of compiling a new specialisation."""
    return njit(list(signatures), cache=True, nogil=True)


@jit
def cross(a, b, out):
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


@jit
def add_cross(a, b, out):
    """out += a x b"""
    out[0] += a[1] * b[2] - a[2] * b[1]
    out[1] += a[2] * b[0] - a[0] * b[2]
    out[2] += a[0] * b[1] - a[1] * b[0]


@jit
def add_scaled_cross(a, b, s, out):
    """out += a x (s b)"""
    out[0] += s * (a[1] * b[2] - a[2] * b[1])
    out[1] += s * (a[2] * b[0] - a[0] * b[2])
    out[2] += s * (a[0] * b[1] - a[1] * b[0])


@jit
def rotate(E, x, out):
    """out = E x"""
    for k in range(3):
        out[k] = E[k, 0] * x[0] + E[k, 1] * x[1] + E[k, 2] * x[2]


@jit
def transform_motion(E, r, w, v, out_w, out_v):
    """[out_w; out_v] = X [w; v]"""
    d0 = v[0] - (r[1] * w[2] - r[2] * w[1])
    d1 = v[1] - (r[2] * w[0] - r[0] * w[2])
    d2 = v[2] - (r[0] * w[1] - r[1] * w[0])
    for k in range(3):
        out_w[k] = E[k, 0] * w[0] + E[k, 1] * w[1] + E[k, 2] * w[2]
        out_v[k] = E[k, 0] * d0 + E[k, 1] * d1 + E[k, 2] * d2


@jit
def add_transformed_force(E, r, n, f, out_n, out_f):
    """[out_n; out_f] += X^T [n; f]: a force in B coordinates, accumulated in A coordinates."""
    fa0 = E[0, 0] * f[0] + E[1, 0] * f[1] + E[2, 0] * f[2]
    fa1 = E[0, 1] * f[0] + E[1, 1] * f[1] + E[2, 1] * f[2]
    fa2 = E[0, 2] * f[0] + E[1, 2] * f[1] + E[2, 2] * f[2]
    out_n[0] += E[0, 0] * n[0] + E[1, 0] * n[1] + E[2, 0] * n[2] + r[1] * fa2 - r[2] * fa1
    out_n[1] += E[0, 1] * n[0] + E[1, 1] * n[1] + E[2, 1] * n[2] + r[2] * fa0 - r[0] * fa2
    out_n[2] += E[0, 2] * n[0] + E[1, 2] * n[1] + E[2, 2] * n[2] + r[0] * fa1 - r[1] * fa0
    out_f[0] += fa0
    out_f[1] += fa1
    out_f[2] += fa2


@jit
def inertia_times(m, h, Ibar, w, v, out_n, out_f):
    """[out_n; out_f] = I [w; v] for the compact inertia (m, h, Ibar)."""
    for k in range(3):
        out_n[k] = Ibar[k, 0] * w[0] + Ibar[k, 1] * w[1] + Ibar[k, 2] * w[2]
        out_f[k] = m * v[k]
    add_cross(h, v, out_n)
    add_cross(w, h, out_f)      # - h x w


@jit
def add_cross_force(w, v, n, f, out_n, out_f):
    """[out_n; out_f] += [w; v] x* [n; f] = [w x n + v x f;  w x f]"""
    add_cross(w, n, out_n)
    add_cross(v, f, out_n)
    add_cross(w, f, out_f)


@jit
def inertia_to_parent(E, r, m, h, Ibar, out_h, out_Ibar):
    """Add X^T I X, the body's compact inertia expressed in the parent frame, to out.

    With y = E^T h:  h_p = y + m r,
    Ibar_p = E^T Ibar E - y r^T - r y^T + 2 (r.y) 1 - m (r r^T - |r|^2 1).
    """
    y0 = E[0, 0] * h[0] + E[1, 0] * h[1] + E[2, 0] * h[2]
    y1 = E[0, 1] * h[0] + E[1, 1] * h[1] + E[2, 1] * h[2]
    y2 = E[0, 2] * h[0] + E[1, 2] * h[1] + E[2, 2] * h[2]
    y = (y0, y1, y2)
    ry = r[0] * y0 + r[1] * y1 + r[2] * y2
    rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    for a in range(3):
        out_h[a] += y[a] + m * r[a]
        for b in range(3):
            rotated = 0.0
            for k in range(3):
                for l in range(3):
                    rotated += E[k, a] * Ibar[k, l] * E[l, b]
            shift = -y[a] * r[b] - r[a] * y[b] - m * r[a] * r[b]
            if a == b:
                shift += 2.0 * ry + m * rr
            out_Ibar[a, b] += rotated + shift
