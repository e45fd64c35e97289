"""Coriolis matrix C(q, qd) with Hdot - 2C skew-symmetric.

Kinetic energy is sum_k 1/2 v_k^T I_k v_k with v_k = J_k qd, all in world coordinates. With the
body-level factorisation B_k = 1/2 (v_k x* I_k - I_k v_k x + (I_k v_k) xbar), where
(f xbar) m = m x* f, one has B_k + B_k^T = dI_k/dt, and
    C = sum_k J_k^T (I_k Jdot_k + B_k J_k)
gives Hdot = C + C^T and C qd = sum_k J_k^T (I_k Jdot_k qd + v_k x* I_k v_k), the bias without G.
Column j of every J_k is the world-frame S_j, and its rate is v_j x S_j. Summing I_k and B_k over
subtrees (they are all world-frame) turns the sum into composites, like CRBA:
    C_ij = S_i^T (I^c_d Sdot_j + B^c_d S_j),  d = the deeper of i, j on their common branch.
Not on the 1 kHz path (computed torque uses bias()), so it uses plain 6x6 matrices for clarity.
"""
import numpy as np

from .jcalc import joint_transforms
from .model import AXIS, COM_MOMENT, IBAR, MASS, REVOLUTE, W_E, W_R, X_E, X_R
from .external import world_transform
from .spatial import jit, mat, vec


@jit
def skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


@jit
def motion_cross_matrix(v):
    """v x  (crm)"""
    M = np.zeros((6, 6))
    M[:3, :3] = skew(v[:3])
    M[3:, 3:] = skew(v[:3])
    M[3:, :3] = skew(v[3:])
    return M


@jit
def force_cross_bar_matrix(f):
    """f xbar, defined by (f xbar) m = m x* f = -(m x)^T f"""
    M = np.zeros((6, 6))
    M[:3, :3] = -skew(f[:3])
    M[:3, 3:] = -skew(f[3:])
    M[3:, :3] = -skew(f[3:])
    return M


@jit
def world_to_body_motion(E0, r0):
    """iX_0 = (E0, r0) as a 6x6 matrix: [[E0, 0], [-E0 r0x, E0]]"""
    X = np.zeros((6, 6))
    X[:3, :3] = E0
    X[3:, 3:] = E0
    X[3:, :3] = -E0 @ skew(r0)
    return X


@jit
def body_to_world_motion(E0, r0):
    """0X_i, the inverse of iX_0: [[E0^T, 0], [r0 x E0^T, E0^T]]"""
    X = np.zeros((6, 6))
    Et = E0.T.copy()
    X[:3, :3] = Et
    X[3:, 3:] = Et
    X[3:, :3] = skew(r0) @ Et
    return X


@jit
def spatial_inertia_matrix(bodies, i):
    m, h, Ibar = bodies[i, MASS, 0], bodies[i, COM_MOMENT], bodies[i, IBAR:IBAR + 3]
    I = np.zeros((6, 6))
    I[:3, :3] = Ibar
    I[:3, 3:] = skew(h)
    I[3:, :3] = -skew(h)
    I[3:, 3:] = m * np.eye(3)
    return I


@jit
def coriolis_into(topology, bodies, ws, q, qd, C):
    nb = topology.shape[0]
    joint_transforms(topology, bodies, q, ws)
    S = np.zeros((nb, 6))        # world-frame motion subspaces
    V = np.zeros((nb, 6))        # world-frame body velocities
    Ic = np.zeros((nb, 6, 6))    # world-frame inertias, then subtree composites
    Bc = np.zeros((nb, 6, 6))
    for i in range(nb):
        parent = topology[i, 0]
        world_transform(topology, ws, i, mat(ws, i, X_E), vec(ws, i, X_R))
        E0, r0 = ws[i, W_E:W_E + 3].copy(), ws[i, W_R].copy()
        X = body_to_world_motion(E0, r0)
        S_body = np.zeros(6)
        offset = 0 if topology[i, 1] == REVOLUTE else 3
        S_body[offset:offset + 3] = bodies[i, AXIS]
        S[i] = X @ S_body
        v = S[i] * qd[i]
        if parent >= 0:
            v += V[parent]
        V[i] = v
        X_to_body = world_to_body_motion(E0, r0)
        I = X_to_body.T @ spatial_inertia_matrix(bodies, i) @ X_to_body   # world frame
        crm = motion_cross_matrix(v)
        Ic[i] = I
        Bc[i] = 0.5 * (-crm.T @ I - I @ crm + force_cross_bar_matrix(I @ v))
    Sdot = np.zeros((nb, 6))     # S_j is fixed in body j, so it turns with v_j
    for i in range(nb):
        Sdot[i] = motion_cross_matrix(V[i]) @ S[i]
    for i in range(nb - 1, -1, -1):
        parent = topology[i, 0]
        if parent >= 0:
            Ic[parent] += Ic[i]
            Bc[parent] += Bc[i]
    C[:, :] = 0.0
    for i in range(nb):
        j = i
        while j >= 0:
            # i is the deeper: its subtree lies in j's
            C[i, j] = S[i] @ (Ic[i] @ Sdot[j] + Bc[i] @ S[j])
            if j != i:
                C[j, i] = S[j] @ (Ic[i] @ Sdot[i] + Bc[i] @ S[i])
            j = topology[j, 0]
