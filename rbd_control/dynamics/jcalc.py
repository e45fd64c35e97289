"""jcalc: the joint transform X_i = X_J(q_i) Xtree_i for revolute and prismatic joints.

Revolute: X_J rotates coordinates by -q about the axis (E_J = R(axis, q)^T, Rodrigues).
Prismatic: X_J moves the origin by axis*q. In both, the motion subspace in body coordinates
is constant, S = [axis; 0] or [0; axis], and c_J = 0.
"""
import math

from .model import AXIS, REVOLUTE, X_E, X_R, XTREE_E, XTREE_R
from .spatial import add, dot, jit, mat, mat_mul, put, put_mat, rotate_back, scale, vec


@jit
def joint_rotation(axis, qi):
    """E_J = cos q 1 + (1 - cos q) a a^T - sin q [a]x"""
    c, s = math.cos(qi), math.sin(qi)
    t = 1.0 - c
    ax, ay, az = axis
    return ((c + t * ax * ax, t * ax * ay + s * az, t * ax * az - s * ay),
            (t * ay * ax - s * az, c + t * ay * ay, t * ay * az + s * ax),
            (t * az * ax + s * ay, t * az * ay - s * ax, c + t * az * az))


@jit
def joint_transform(bodies, jtype, i, qi):
    """(E, r) of X_i at coordinate qi."""
    E_tree, r_tree = mat(bodies, i, XTREE_E), vec(bodies, i, XTREE_R)
    axis = vec(bodies, i, AXIS)
    if jtype == REVOLUTE:
        return mat_mul(joint_rotation(axis, qi), E_tree), r_tree
    # the joint frame slides along the axis: r = r_tree + E_tree^T axis q
    return E_tree, add(r_tree, scale(rotate_back(E_tree, axis), qi))


@jit
def store_joint_transform(topology, bodies, ws, i, qi):
    E, r = joint_transform(bodies, topology[i, 1], i, qi)
    put_mat(ws, i, X_E, E)
    put(ws, i, X_R, r)
    return E, r


@jit
def joint_transforms(topology, bodies, q, ws):
    for i in range(topology.shape[0]):
        store_joint_transform(topology, bodies, ws, i, q[i])


@jit
def subspace_dot(jtype, axis, n, f):
    """S_i^T [n; f]"""
    return dot(axis, n) if jtype == REVOLUTE else dot(axis, f)
