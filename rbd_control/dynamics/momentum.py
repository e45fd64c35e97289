"""The model side of a generalized momentum observer in one O(n) pass: p = H(q) qd,
C(q, qd)^T qd and G(q), with no H, no C and no finite difference (the observer of Haddadin,
De Luca, Albu-Schaeffer, "Robot Collisions: A Survey on Detection, Isolation, and
Identification", IEEE T-RO 33(6) 2017, eq. 30, needs exactly these three).

In world coordinates (as coriolis.py and crba.py), with h_k = I_k v_k the spatial momentum of
body k and J_k its Jacobian, whose column j is the world-frame S_j for each ancestor-or-self j:
    p = H qd = sum_k J_k^T I_k v_k            ->  p_j = S_j^T h^c_j
where h^c_j = sum of h_k over j's subtree (RBDA §6.2's composite idea applied to momenta).
With Hdot = C + C^T and the C of coriolis.py (C qd = sum_k J_k^T (I_k Jdot_k qd + v_k x* h_k),
Idot_k = v_k x* I_k - I_k v_k x, so Idot_k v_k = v_k x* h_k):
    Hdot qd = sum_k J_k^T (Idot_k v_k + I_k Jdot_k qd) + Jdot_k^T h_k
    C^T qd = Hdot qd - C qd = sum_k Jdot_k^T h_k   ->  (C^T qd)_j = Sdot_j^T h^c_j
with Sdot_j = v_j x S_j (coriolis.velocities). The identity holds for every C with
Hdot = C + C^T and the same C qd, so it equals Pinocchio's computeCoriolisMatrix(...)^T qd.
G rides along: the gravity wrench of body k at rest is I_k [0; -g] = [-h_k x g; -m_k g]
(I [0; v] = [h x v; m v]), so G_j = S_j^T [-hbar^c_j x g; -m^c_j g] with the subtree's mass
m^c_j and first moment hbar^c_j, as in gravity.py (here in world coordinates).

momentum_observer_kernel adds one discrete step of the observer on top (the whole per-state
cost of control/contact/observer.py in one compiled call): with the baseline s = p(0) +
integral of (tau + C^T qd - g + r) dt and r = K_O (p - s), backward Euler in r gives
    s_k = (s_{k-1} + (tau + C^T qd - g) dt + K_O dt p_k) / (1 + K_O dt),   r_k = K_O (p_k - s_k)
so a constant tau_ext is approached as r_k - tau_ext = (r_{k-1} - tau_ext) / (1 + K_O dt):
stable and without overshoot at any K_O dt (explicit Euler diverges beyond K_O dt = 2).
"""
from numba import float64, int64

from rbd_control.dynamics.checks import (INPUT, MATRIX, MODEL_ARGS, VECTOR, WRONG_LENGTH,
                                         state_status)
from rbd_control.dynamics.coriolis import inertia_of, subspace, velocities
from rbd_control.dynamics.crba import world_subspaces_and_inertias
from rbd_control.dynamics.jcalc import joint_transforms
from rbd_control.dynamics.model import (A_ANG, A_LIN, F_ANG, F_LIN, GRAVITY, IC_H, IC_M, V_ANG,
                                        V_LIN, parent)
from rbd_control.dynamics.spatial import (accumulate, compiled, cross, inertia_times, jit, put,
                                          scale, spatial_dot, vec)

P, CT_QD, G = 0, 1, 2      # rows of the output: p, C^T qd, G
BUFFERS_WRONG_LENGTH = 4 * 4 + WRONG_LENGTH   # checks' code for argument 4: s, r and out


@jit
def momentum_terms_into(md, q, qd, out):
    """inputs: q, qd; outputs: out rows P, CT_QD, G; md rows X, W, S, IC, V (v_k), A (Sdot_k),
    F (h^c_k), all in world coordinates."""
    nb = md.shape[0]
    joint_transforms(md, q)
    world_subspaces_and_inertias(md)          # S_i and I_i in world coordinates
    # v_i and Sdot_i = v_i x S_i into the workspace rows V and A
    velocities(md, qd, md[:, V_ANG:V_LIN + 1], md[:, A_ANG:A_LIN + 1])
    for k in range(nb):
        # h_k = I_k v_k
        m, h, Ibar = inertia_of(md, k)
        n, f = inertia_times(m, h, Ibar, vec(md, k, V_ANG), vec(md, k, V_LIN))
        put(md, k, F_ANG, n)
        put(md, k, F_LIN, f)
    g = vec(md, 0, GRAVITY)
    for j in range(nb - 1, -1, -1):
        # F rows hold h^c_j, IC_M and IC_H the subtree's mass and first moment
        n, f = vec(md, j, F_ANG), vec(md, j, F_LIN)
        s_w, s_v = subspace(md, j)
        # p_j = S_j^T h^c_j,  (C^T qd)_j = Sdot_j^T h^c_j
        out[P, j] = spatial_dot(s_w, s_v, n, f)
        out[CT_QD, j] = spatial_dot(vec(md, j, A_ANG), vec(md, j, A_LIN), n, f)
        # G_j = S_j^T [-hbar^c_j x g; -m^c_j g]
        m, hbar = md[j, IC_M, 0], vec(md, j, IC_H)
        out[G, j] = spatial_dot(s_w, s_v, cross(g, hbar), scale(g, -m))
        p = parent(md, j)
        if p >= 0:
            accumulate(md, p, F_ANG, n)
            accumulate(md, p, F_LIN, f)
            md[p, IC_M, 0] += m
            accumulate(md, p, IC_H, hbar)


@compiled(int64(INPUT, INPUT, MATRIX, *MODEL_ARGS))
def momentum_terms_kernel(q, qd, out, md):
    """inputs: q, qd; outputs: out (3, nq), md. Returns 0 or a checks status code."""
    status = state_status(md.shape[0], q, qd, q)
    if status == 0:
        momentum_terms_into(md, q, qd, out)
    return status


@compiled(int64(INPUT, INPUT, INPUT, float64, float64, VECTOR, VECTOR, MATRIX, *MODEL_ARGS))
def momentum_observer_kernel(q, qd, tau, gain, dt, s, r, out, md):
    """inputs: q, qd, tau (the torque that acted over dt), gain K_O, dt > 0; in and out: s, r;
    outputs: out (3, nq) as momentum_terms_kernel, md. Returns 0 or a status code."""
    n = md.shape[0]
    status = state_status(n, q, qd, tau)
    if status != 0:
        return status
    if s.shape[0] != n or r.shape[0] != n or out.shape[0] != 3 or out.shape[1] != n:
        return BUFFERS_WRONG_LENGTH
    momentum_terms_into(md, q, qd, out)
    k_dt = gain * dt
    for j in range(md.shape[0]):
        p = out[P, j]
        # s = (s + (tau + C^T qd - g) dt + K_O dt p) / (1 + K_O dt),  r = K_O (p - s)
        s[j] = (s[j] + (tau[j] + out[CT_QD, j] - out[G, j]) * dt + k_dt * p) / (1.0 + k_dt)
        r[j] = gain * (p - s[j])
    return 0
