"""jcalc: the joint transform X_i = X_J(q_i) Xtree_i for revolute and prismatic joints.

Revolute: X_J rotates coordinates by -q about the axis (E_J = R(axis, q)^T, Rodrigues).
Prismatic: X_J translates the origin by axis*q. In both, the motion subspace in body
coordinates is constant: S = [axis; 0] or [0; axis], and c_J = 0.
"""
import math

from .model import AXIS, REVOLUTE, X_E, X_R, XTREE_E, XTREE_R
from .spatial import jit


@jit
def joint_transform(bodies, jtype, i, qi, ws):
    """Write X_i of body i at coordinate qi into ws[i] rows X_E..X_R."""
    Et = bodies[i, XTREE_E:XTREE_E + 3]
    rt = bodies[i, XTREE_R]
    axis = bodies[i, AXIS]
    E = ws[i, X_E:X_E + 3]
    r = ws[i, X_R]
    if jtype == REVOLUTE:
        c, s = math.cos(qi), math.sin(qi)
        ax, ay, az = axis[0], axis[1], axis[2]
        t = 1.0 - c
        # E_J = c 1 + (1 - c) a a^T - s [a]x
        J00, J01, J02 = c + t * ax * ax, t * ax * ay + s * az, t * ax * az - s * ay
        J10, J11, J12 = t * ay * ax - s * az, c + t * ay * ay, t * ay * az + s * ax
        J20, J21, J22 = t * az * ax + s * ay, t * az * ay - s * ax, c + t * az * az
        for k in range(3):
            E[0, k] = J00 * Et[0, k] + J01 * Et[1, k] + J02 * Et[2, k]
            E[1, k] = J10 * Et[0, k] + J11 * Et[1, k] + J12 * Et[2, k]
            E[2, k] = J20 * Et[0, k] + J21 * Et[1, k] + J22 * Et[2, k]
            r[k] = rt[k]
    else:
        for k in range(3):
            for l in range(3):
                E[k, l] = Et[k, l]
            # the joint frame slides along the axis: r = rt + Et^T axis q
            r[k] = rt[k] + (Et[0, k] * axis[0] + Et[1, k] * axis[1] + Et[2, k] * axis[2]) * qi


@jit
def joint_transforms(topology, bodies, q, ws):
    for i in range(topology.shape[0]):
        joint_transform(bodies, topology[i, 1], i, q[i], ws)


@jit
def motion_subspace_dot(bodies, jtype, i, ang, lin):
    """S_i^T f for a force f = [ang; lin] in body coordinates."""
    axis = bodies[i, AXIS]
    row = ang if jtype == REVOLUTE else lin
    return axis[0] * row[0] + axis[1] * row[1] + axis[2] * row[2]
