"""Closed-form equations of motion after Zhang Dingguo (2000), "The addendum for the generalized
d'Alembert equations of motion" (对广义达朗贝尔运动方程的一点补遗), Applied Mathematics and
Mechanics (应用数学和力学) 21(1): 67-72: the generalized d'Alembert (G-D) equations with the
prismatic-joint indicator xi and the branch decomposition of trees. Equation and section
numbers below are the paper's.

This module is a cross-check, not a fast path: plain numpy, world-frame 3-vectors, no spatial
algebra and nothing shared with the RNEA/CRBA kernels except the Model's data rows. If it and
RNEA agree, two unrelated derivations of the same Lagrangian agree.

Notation (the paper's, with one shift: the paper numbers the axis of joint i as z_{i-1}, after
Denavit-Hartenberg; here joint i moves body i, so its axis is z_i and its origin p_i):

    xi_i  = 1 if joint i is revolute (continuous included), 0 if prismatic         (1)
    z_i   unit axis of joint i, world frame;  p_i a point on it (body i's origin)
    r_s   centre of mass of body s, world frame;  m_s its mass
    I_s   rotational inertia of body s about r_s, world frame  (= sR0^T I_s sR0 of eq. 20)
    i <= s  means "joint i lies on the path from the root to body s"

Velocities are sums over the joints below the body (eqs. 3 and 6):

    omega_s = sum_{j<=s} qd_j xi_j z_j
    v_s     = sum_{j<=s} qd_j dv_s/dqd_j,   dv_s/dqd_j = xi_j z_j x (r_s - p_j) + (1-xi_j) z_j (12)
                                            domega_s/dqd_j = xi_j z_j

Lagrange's equation for body s and coordinate i (eqs. 8-11: d/dt dv/dqd = dv/dq) reduces to
the d'Alembert form

    tau_i = sum_{s>=i} m_s (vdot_s - g) . dv_s/dqd_i                           (14) - (30)
          + xi_i z_i . (I_s omegadot_s + omega_s x I_s omega_s)               (26)

and, splitting the accelerations into qdd terms and velocity products,
tau = H qdd + C qd + G with

    H_ik   = sum_{s>=i,k} m_s dv_s/dqd_i . dv_s/dqd_k + xi_i xi_k z_i . I_s z_k
    G_i    = -sum_{s>=i} m_s g . dv_s/dqd_i
    (C qd)_i = sum_{s>=i} m_s a_s . dv_s/dqd_i + xi_i z_i . (I_s alpha_s + omega_s x I_s omega_s)

where a_s = Jdot_v qd and alpha_s = Jdot_omega qd are the velocity-product accelerations
(eqs. 16-19 and 24). Every vector in a Jacobian column is fixed in some body, so its rate is
that body's angular velocity crossed with it (eqs. 22-23):

    d/dt z_j = omega_j x z_j,   d/dt r_s = v_s,   d/dt p_j = velocity of body j's origin
    alpha_s  = sum_{j<=s} qd_j xi_j (omega_j x z_j)
    a_s      = sum_{j<=s} qd_j [ xi_j ((omega_j x z_j) x (r_s - p_j) + z_j x (v_s - pdot_j))
                                 + (1-xi_j) omega_j x z_j ]

Trees, by branch decomposition (the paper's section 2): every root-to-leaf path is a serial
chain and is solved with the formula above. A body shared by several paths is real (has its
mass) only in the first path that reaches it and is a massless "virtual body" in the others;
a shared joint's torque is the sum of its torques over all paths, tau_1 = tau_1^(1) + ... .

External forces: f_ext maps a link name to a world wrench [n; f] about the world origin, as in
rnea(); it loads every joint j <= body(link) with  -(xi_j z_j . (n - p_j x f) + (1-xi_j) z_j . f).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.external import external_forces_array
from rbd_control.dynamics.model import AXIS, COM_MOMENT, IBAR, MASS, PRISMATIC, XTREE_E, XTREE_R


@dataclass
class Kinematics:
    """World-frame quantities of every body at one (q, qd); index = body = joint."""

    xi: np.ndarray          # (n,) 1 revolute, 0 prismatic
    z: np.ndarray           # (n, 3) joint axes
    p: np.ndarray           # (n, 3) joint origins (body origins)
    r: np.ndarray           # (n, 3) centres of mass
    mass: np.ndarray        # (n,)
    inertia: np.ndarray     # (n, 3, 3) about the centre of mass, world frame
    omega: np.ndarray       # (n, 3) angular velocities
    v: np.ndarray           # (n, 3) centre-of-mass velocities
    origin_velocity: np.ndarray  # (n, 3) velocities of the body origins (pdot)
    path: list              # path[s] = joints from the root to s, root first


def axis_rotation(axis, angle) -> np.ndarray:
    """Rodrigues: rotation by `angle` about the unit `axis`."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def skew(x) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _state(model, value, name) -> np.ndarray:
    x = np.asarray(value, dtype=np.float64)
    if x.shape != (model.nq,):
        raise InputError(f"{name} must have length nq = {model.nq}, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise InputError(f"{name} contains NaN or inf")
    return x


def kinematics(model, q, qd) -> Kinematics:
    """Forward kinematics from the Model rows, written out with rotation matrices."""
    q, qd = _state(model, q, "q"), _state(model, qd, "qd")
    n = model.nq
    parent, jtype, B = model.parent, model.joint_type, model.bodies
    xi = np.where(jtype == PRISMATIC, 0.0, 1.0)
    R = np.zeros((n, 3, 3))           # body -> world rotation
    o = np.zeros((n, 3))              # body origin in the world
    z, r = np.zeros((n, 3)), np.zeros((n, 3))
    mass, inertia = B[:, MASS, 0].copy(), np.zeros((n, 3, 3))
    omega, v, o_dot = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    path = []
    for s in range(n):
        R_joint = B[s, XTREE_E:XTREE_E + 3].T          # joint frame in parent coordinates
        t_joint = B[s, XTREE_R]
        axis = B[s, AXIS]
        if parent[s] >= 0:
            R_parent, o_parent = R[parent[s]], o[parent[s]]
            path.append(path[parent[s]] + [s])
        else:
            R_parent, o_parent = np.eye(3), np.zeros(3)
            path.append([s])
        if xi[s]:
            R[s] = R_parent @ R_joint @ axis_rotation(axis, q[s])
            o[s] = o_parent + R_parent @ t_joint
        else:
            R[s] = R_parent @ R_joint
            o[s] = o_parent + R_parent @ (t_joint + R_joint @ axis * q[s])
        z[s] = R[s] @ axis
        if mass[s] > 0:
            c = B[s, COM_MOMENT] / mass[s]                  # body coordinates
            I_com = B[s, IBAR:IBAR + 3] - mass[s] * (c @ c * np.eye(3) - np.outer(c, c))
            r[s] = o[s] + R[s] @ c
            inertia[s] = R[s] @ I_com @ R[s].T
        else:
            r[s] = o[s]                                     # a massless body adds nothing
    p = o
    for s in range(n):   # eqs. 3 and 6: sums over the joints below s
        for j in path[s]:
            omega[s] += qd[j] * xi[j] * z[j]
            v[s] += qd[j] * linear_column(xi[j], z[j], p[j], r[s])
            o_dot[s] += qd[j] * linear_column(xi[j], z[j], p[j], o[s])
    return Kinematics(xi, z, p, r, mass, inertia, omega, v, o_dot, path)


def linear_column(xi_j, z_j, p_j, x) -> np.ndarray:
    """Eq. 12: the velocity of a point x per unit qd_j."""
    return xi_j * np.cross(z_j, x - p_j) + (1.0 - xi_j) * z_j


def branches(model) -> list:
    """Root-to-leaf paths of the body tree (the paper's section 2), leaves in body order."""
    has_child = np.zeros(model.nq, dtype=bool)
    for s in range(model.nq):
        if model.parent[s] >= 0:
            has_child[model.parent[s]] = True
    leaves = [s for s in range(model.nq) if not has_child[s]]
    paths = []
    for leaf in leaves:
        chain, s = [], leaf
        while s >= 0:
            chain.append(s)
            s = model.parent[s]
        paths.append(chain[::-1])
    return paths


def chain_terms(K: Kinematics, chain, real, qd, gravity):
    """(H, C qd, G) of one serial chain (bodies `chain`, root first), restricted to its joints.
    Bodies with real[s] False are the paper's virtual bodies (虚体): they carry no mass."""
    n = len(chain)
    H, c, G = np.zeros((n, n)), np.zeros(n), np.zeros(n)
    for b, s in enumerate(chain):
        if not real[s] or K.mass[s] == 0:
            continue
        joints = chain[:b + 1]                          # every i <= s on this chain
        Jv = np.array([linear_column(K.xi[j], K.z[j], K.p[j], K.r[s]) for j in joints])
        Jw = np.array([K.xi[j] * K.z[j] for j in joints])
        alpha, a = np.zeros(3), np.zeros(3)             # Jdot_omega qd, Jdot_v qd
        for j in joints:
            z_dot = np.cross(K.omega[j], K.z[j])
            alpha += qd[j] * K.xi[j] * z_dot
            a += qd[j] * (K.xi[j] * (np.cross(z_dot, K.r[s] - K.p[j])
                                     + np.cross(K.z[j], K.v[s] - K.origin_velocity[j]))
                          + (1.0 - K.xi[j]) * z_dot)
        m, I, w = K.mass[s], K.inertia[s], K.omega[s]
        k = b + 1
        H[:k, :k] += m * Jv @ Jv.T + Jw @ I @ Jw.T
        G[:k] -= m * Jv @ gravity
        c[:k] += m * Jv @ a + Jw @ (I @ alpha + np.cross(w, I @ w))
    return H, c, G


def closed_form_terms(model, q, qd):
    """(H(q), C(q, qd) qd, G(q)) by the G-D equations and the branch decomposition."""
    K = kinematics(model, q, qd)
    qd = np.asarray(qd, dtype=np.float64)
    n = model.nq
    H, c, G = np.zeros((n, n)), np.zeros(n), np.zeros(n)
    counted = np.zeros(n, dtype=bool)
    for chain in branches(model):
        real = ~counted                      # shared bodies already counted are virtual here
        H_b, c_b, G_b = chain_terms(K, chain, real, qd, model.gravity)
        counted[chain] = True
        index = np.array(chain)
        H[np.ix_(index, index)] += H_b       # shared joints: sum over the branches
        c[index] += c_b
        G[index] += G_b
    return H, c, G


def external_torques(model, K: Kinematics, f_ext) -> np.ndarray:
    """sum_k J_k^T f_k for world wrenches [n; f] about the world origin (validated and summed
    per body by the same parser rnea uses; the projection below is this module's own)."""
    tau = np.zeros(model.nq)
    if not f_ext:
        return tau
    for body, (moment, force) in enumerate(external_forces_array(model, f_ext)):
        for j in K.path[body]:
            tau[j] += (K.xi[j] * K.z[j] @ (moment - np.cross(K.p[j], force))
                       + (1.0 - K.xi[j]) * K.z[j] @ force)
    return tau


def closed_form_rnea(model, q, qd, qdd, f_ext=None) -> np.ndarray:
    """tau = H qdd + C qd + G - sum_k J_k^T f_ext_k, the same contract as rnea()."""
    qdd = _state(model, qdd, "qdd")
    H, c, G = closed_form_terms(model, q, qd)
    tau = H @ qdd + c + G
    if f_ext:
        tau -= external_torques(model, kinematics(model, q, qd), f_ext)
    return tau


def kinetic_energy(model, q, qd) -> float:
    """eq. 7 summed over the bodies: 1/2 m_s v_s.v_s + 1/2 omega_s . I_s omega_s."""
    K = kinematics(model, q, qd)
    return 0.5 * float(sum(K.mass[s] * K.v[s] @ K.v[s] + K.omega[s] @ K.inertia[s] @ K.omega[s]
                           for s in range(model.nq)))
