"""Frame kinematics of any URDF link: pose, Jacobian and classical acceleration bias.

A link's frame sits in its body at the placement (E_l, r_l) of Model.link_placement (tool0 and
flanges merged through fixed joints included); the kernels take it with the body index and the
point packed in one array F = [E_l; r_l; (body, 0, 0); point] (6 x 3, task_space.link_frames;
the point in link coordinates, zero for the link origin), two arguments fewer.
Write x_j = R x_link + p for the frame seen in the coordinates of body j. Walking from the link's
body towards the root re-expresses it in each ancestor's coordinates with that ancestor's joint
transform X_j = (E_j, r_j) from jcalc:
    x_parent = E_j^T x_j + r_j        so    R <- E_j^T R,    p <- E_j^T p + r_j
and at the root (R, p) is world <- link (Pinocchio's updateFramePlacement). One walk over the
branch, no workspace, nothing computed for bodies off the branch.

The Jacobian (the geometric Jacobian, Siciliano et al. 2009 sec. 3.1; Pinocchio's
computeFrameJacobian in LOCAL_WORLD_ALIGNED, angular rows first) has a non-zero column only
for the joints of the support set kappa(b) of the link's body b, the joints between b and the
root (RBDA (Featherstone 2008) ch. 4's connectivity: S_j in the columns j of kappa(b), zeros
elsewhere; Pinocchio's model.supports). One pass over
kappa(b) from the root outwards composes 0X_j = jX_p pX_0 and writes each column as S_j in
world coordinates (about the world origin, jcalc.subspace_from with 0X_j), and the end of the
pass is the frame's world pose; a last pass over kappa(b) moves the columns' reference point
from the world origin to the frame's point p_0:
    J_j = [s_w;  s_v + s_w x p_0]       ([s_w; s_v] = 0X_j^-1 S_j)
No transform is applied to a column, and nothing is computed off the branch.

The bias Jdot qd is the classical acceleration of the point at qdd = 0 (Pinocchio's
getFrameClassicalAcceleration). The RNEA outward pass with qdd = 0 and no gravity gives the
body's velocity [w; v] and spatial acceleration [dw; dv] in body coordinates; for a point p of
the body the classical acceleration is (RBDA sec. 2.10)
    a_p = dv + dw x p + w x (v + w x p)
The outward pass starts from the base acceleration a_0 = -a_g = [0; -g] (the gravity row of
md); a_i is linear in a_0 with the term iX_0 a_0 = [0; -E0 g] (E0: body <- world rotation), so
the gravity-free dv is dv + E0 g.
"""
import numpy as np
from numba import int64, void

from rbd_control.dynamics.checks import (INPUT, MATRIX, MODEL_ARGS, TENSOR, VECTOR, state_status,
                                         vector_status)
from rbd_control.dynamics.jcalc import joint_transform, subspace_from
from rbd_control.dynamics.model import A_ANG, A_LIN, GRAVITY, NO_FEXT, V_ANG, V_LIN, parent
from rbd_control.dynamics.rnea import outward_pass
from rbd_control.dynamics.spatial import (ZERO, add, compiled, cross, jit, mat_mul, rotate,
                                          rotate_back, transpose, vec)

IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
FRAME_BODY = 4   # the row of F holding the body index (-1: the fixed base) in column 0
FRAME_POINT = 5  # the row of F holding the point (link coordinates)
FRAME_ROWS = 6


@jit
def frame_body(F):
    return int(F[FRAME_BODY, 0])


@jit
def frame_in_body(F, point):
    """(R, p) of a link frame in its body, from F = [E_l; r_l; ...]: x_body = E_l^T x_link
    + r_l, with the origin moved to `point` (link coordinates)."""
    R = transpose(((F[0, 0], F[0, 1], F[0, 2]), (F[1, 0], F[1, 1], F[1, 2]),
                   (F[2, 0], F[2, 1], F[2, 2])))
    return R, add((F[3, 0], F[3, 1], F[3, 2]), rotate(R, point))


@jit
def frame_point(F):
    return (F[FRAME_POINT, 0], F[FRAME_POINT, 1], F[FRAME_POINT, 2])


@jit
def to_parent(E, r, R, p):
    """x_parent = E^T x_j + r applied to the frame (R, p)."""
    E_T = transpose(E)
    return mat_mul(E_T, R), add(rotate(E_T, p), r)


@jit
def frame_in_world(md, q, body, R, p):
    """(R, p) given in body `body` coordinates -> world <- frame."""
    j = body
    while j >= 0:
        E, r = joint_transform(md, j, q[j])
        R, p = to_parent(E, r, R, p)
        j = parent(md, j)
    return R, p


@jit
def put_column(J, j, w, v):
    J[0, j], J[1, j], J[2, j] = w[0], w[1], w[2]
    J[3, j], J[4, j], J[5, j] = v[0], v[1], v[2]


@jit
def jacobian_into(md, q, body, R, p, J):
    """J (6 x nq) of the frame (R, p) of body `body`, world axes; returns world <- frame."""
    J[:, :] = 0.0
    # kappa(body), marked in row 0 (each column is written before it is read again)
    j = body
    while j >= 0:
        J[0, j] = 1.0
        j = parent(md, j)
    E0, r0 = IDENTITY, ZERO
    for j in range(body + 1):
        if J[0, j] != 0.0:
            # 0X_j = jX_p pX_0:  E0 <- E E0,  r0 <- r0 + E0^T r  (E0 of the parent on the right)
            E, r = joint_transform(md, j, q[j])
            E0, r0 = mat_mul(E, E0), add(r0, rotate_back(E0, r))
            # S_j in world coordinates: 0X_j^-1 S_j
            w, v = subspace_from(md, j, E0, r0)
            put_column(J, j, w, v)
    # world <- frame: x_0 = E0^T (R x + p) + r0
    R, p = mat_mul(transpose(E0), R), add(r0, rotate_back(E0, p))
    j = body
    while j >= 0:
        # J_j = [s_w; s_v + s_w x p_0]: the velocity of the point instead of the world origin
        w = (J[0, j], J[1, j], J[2, j])
        v = add((J[3, j], J[4, j], J[5, j]), cross(w, p))
        J[3, j], J[4, j], J[5, j] = v[0], v[1], v[2]
        j = parent(md, j)
    return R, p


@jit
def frame_jacobian_into(md, q, F, J):
    """J (6 x nq) of the link frame F at its point (world axes), the kernels' shared first step."""
    R, p = frame_in_body(F, frame_point(F))
    jacobian_into(md, q, frame_body(F), R, p, J)


@jit
def pose_into(R, p, T):
    """T = [R p; 0 1]"""
    for row in range(3):
        T[row, 0], T[row, 1], T[row, 2], T[row, 3] = R[row][0], R[row][1], R[row][2], p[row]
    T[3, 0], T[3, 1], T[3, 2], T[3, 3] = 0.0, 0.0, 0.0, 1.0


@jit
def frame_pose_into(md, q, F, T):
    R, p = frame_in_body(F, ZERO)
    R, p = frame_in_world(md, q, frame_body(F), R, p)
    pose_into(R, p, T)


@compiled(int64(INPUT, MATRIX, MATRIX, *MODEL_ARGS))
def frame_pose_kernel(q, F, T, md):
    """inputs: q, F; outputs: T (md is only read). Returns 0 or a checks status code."""
    status = vector_status(q, md.shape[0], 1)
    if status == 0:
        frame_pose_into(md, q, F, T)
    return status


@compiled(void(MATRIX, MATRIX, TENSOR, *MODEL_ARGS), nogil=True)
def frame_pose_batch_kernel(Q, F, T, md):
    """inputs: Q (checked by the caller), F; outputs: T (md is only read)."""
    for k in range(Q.shape[0]):
        frame_pose_into(md, Q[k], F, T[k])


@compiled(int64(INPUT, MATRIX, MATRIX, *MODEL_ARGS))
def frame_jacobian_kernel(q, F, J, md):
    """inputs: q, F (with its point); outputs: J (md is only read). Returns 0 or a status
    code."""
    status = vector_status(q, md.shape[0], 1)
    if status == 0:
        frame_jacobian_into(md, q, F, J)
    return status


@jit
def bias_acceleration_into(md, q, qd, F, out):
    """out = Jdot qd = [dw; a_p] in world axes (zero for a link on the fixed base)."""
    out[:] = 0.0
    body = frame_body(F)
    if body < 0:
        return
    outward_pass(md, q, qd, np.zeros(md.shape[0]), NO_FEXT)
    _, p = frame_in_body(F, frame_point(F))
    R0, _ = frame_in_world(md, q, body, IDENTITY, ZERO)   # world <- body
    w, v, dw = vec(md, body, V_ANG), vec(md, body, V_LIN), vec(md, body, A_ANG)
    # dv without the base's -a_g: dv + E0 g, E0 = R0^T
    dv = add(vec(md, body, A_LIN), rotate_back(R0, vec(md, 0, GRAVITY)))
    # a_p = dv + dw x p + w x (v + w x p)
    a_p = add(add(dv, cross(dw, p)), cross(w, add(v, cross(w, p))))
    dw0, a0 = rotate(R0, dw), rotate(R0, a_p)
    out[0], out[1], out[2], out[3], out[4], out[5] = dw0[0], dw0[1], dw0[2], a0[0], a0[1], a0[2]


@compiled(int64(VECTOR, VECTOR, MATRIX, VECTOR, *MODEL_ARGS), allocates=True)
def frame_bias_acceleration_kernel(q, qd, F, out, md):
    """inputs: q, qd, F (with its point); outputs: out, md. Returns 0 or a checks status
    code."""
    status = state_status(md.shape[0], q, qd, q)
    if status == 0:
        bias_acceleration_into(md, q, qd, F, out)
    return status
