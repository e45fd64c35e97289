"""jcalc: everything that depends on a joint's type, and nothing else does (as spatial_v2's
jcalc.m and Pinocchio's JointModel calc; RBDA (Featherstone 2008) ch. 4, Table 4.1).

Revolute: X_J rotates coordinates by -q about the axis (E_J = R(axis, q)^T, Rodrigues); about
an axis +-e_k (most URDFs) only two rows of Xtree's rotation turn, as in Pinocchio's
JointModelRX/RY/RZ. Prismatic: X_J moves the origin by axis*q. In both, the motion subspace in
body coordinates is constant, S = [axis; 0] or [0; axis], and c_J = Sdot qd = 0.

The other algorithms never branch on the type: they call the helpers below, each of which
unrolls the two cases so that no multiplication by a zero half of S is left for the kernels.
"""
import math

from rbd_control.dynamics.model import (ALIGNED_AXIS, AXIS, JOINT_TYPE, REVOLUTE, TOPOLOGY, X_E,
                                        X_R, XTREE_E, XTREE_R)
from rbd_control.dynamics.spatial import (ZERO, add, cross, dot, jit, mat, mat_mul, put, put_mat,
                                          rotate_back, scale, vec)


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
def turn(c, s, a, b):
    """c a + s b"""
    return add(scale(a, c), scale(b, s))


@jit
def aligned_rotation_times(k, c, s, T):
    """R(e_k, q)^T T with c = cos q, s = sin q: rows k+1 and k+2 (mod 3) of T turn, row k stays.
    (E_J about z is [[c, s, 0], [-s, c, 0], [0, 0, 1]].)"""
    if k == 0:
        return T[0], turn(c, s, T[1], T[2]), turn(c, -s, T[2], T[1])
    if k == 1:
        return turn(c, -s, T[0], T[2]), T[1], turn(c, s, T[2], T[0])
    return turn(c, s, T[0], T[1]), turn(c, -s, T[1], T[0]), T[2]


@jit
def joint_transform(md, i, qi):
    """(E, r) of X_i = X_J(q_i) Xtree_i."""
    E_tree, r_tree = mat(md, i, XTREE_E), vec(md, i, XTREE_R)
    axis = vec(md, i, AXIS)
    if md[i, TOPOLOGY, JOINT_TYPE] == REVOLUTE:
        k = int(md[i, TOPOLOGY, ALIGNED_AXIS])
        if k >= 0:
            # axis = +-e_k: E_J = R(e_k, +-q)^T
            return aligned_rotation_times(k, math.cos(qi), md[i, AXIS, k] * math.sin(qi),
                                          E_tree), r_tree
        return mat_mul(joint_rotation(axis, qi), E_tree), r_tree
    # the joint frame slides along the axis: r = r_tree + E_tree^T axis q
    return E_tree, add(r_tree, scale(rotate_back(E_tree, axis), qi))


@jit
def store_joint_transform(md, i, qi):
    E, r = joint_transform(md, i, qi)
    put_mat(md, i, X_E, E)
    put(md, i, X_R, r)
    return E, r


@jit
def joint_transforms(md, q):
    for i in range(md.shape[0]):
        store_joint_transform(md, i, q[i])


@jit
def subspace_from(md, i, E, r):
    """X^-1 S_i for X = (E, r), e.g. S_i in world coordinates with X = iX_0:
    revolute [E^T a; r x E^T a], prismatic [0; E^T a]."""
    axis = rotate_back(E, vec(md, i, AXIS))
    if md[i, TOPOLOGY, JOINT_TYPE] == REVOLUTE:
        return axis, cross(r, axis)
    return ZERO, axis


@jit
def subspace_dot(md, i, n, f):
    """S_i^T [n; f]"""
    if md[i, TOPOLOGY, JOINT_TYPE] == REVOLUTE:
        return dot(vec(md, i, AXIS), n)
    return dot(vec(md, i, AXIS), f)


@jit
def add_joint_motion(md, i, qd_i, qdd_i, w, v, dw, dv):
    """Joint i's share of body i's motion (RBDA eqs. 5.16-5.19, c_J = 0):
        v_i = v + S_i qd_i,   a_i = a + S_i qdd_i + v_i x S_i qd_i
    where (w, v) = iX_parent v_parent and (dw, dv) = iX_parent a_parent."""
    axis = vec(md, i, AXIS)
    S_qd, S_qdd = scale(axis, qd_i), scale(axis, qdd_i)
    if md[i, TOPOLOGY, JOINT_TYPE] == REVOLUTE:
        # v_i x [S qd; 0] = [w_i x S qd; v x S qd], and w_i x S qd = w x S qd
        w = add(w, S_qd)
        return w, v, add(add(dw, S_qdd), cross(w, S_qd)), add(dv, cross(v, S_qd))
    # v_i x [0; S qd] = [0; w x S qd]
    return w, add(v, S_qd), dw, add(add(dv, S_qdd), cross(w, S_qd))
