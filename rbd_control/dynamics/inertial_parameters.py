"""Inertial parameters of one body, pi_i = (m, h, Ibar in (xx, xy, yy, xz, yz, zz)), and their
physically consistent parametrisation.

Pseudo-inertia (Wensing, Kim & Slotine 2017): with the second moment Sigma = 1/2 tr(Ibar) 1 - Ibar,

    J = [[Sigma, h], [h^T, m]]       Ibar = tr(Sigma) 1 - Sigma,

and pi_i is physically consistent (some non-negative density produces it) iff J is positive
semidefinite; positive definite is the strict version used here. Under a rigid transform T of
the frame (rotation R, origin p) J transforms as T J T^T (T = [[R, p], [0, 1]]).

Log-Cholesky (Rucker & Wensing 2022): J = U U^T with U upper triangular,

    U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]],

maps every theta = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3) in R^10 to a positive
definite J, and back: an unconstrained optimiser over theta only ever sees consistent bodies.
"""
from __future__ import annotations

import numpy as np

from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.model import IBAR_ENTRIES, PARAMETERS_PER_BODY

PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")


def ibar_matrix(pi_i) -> np.ndarray:
    """The symmetric 3x3 Ibar of pi_i[4:10]."""
    Ibar = np.empty((3, 3))
    for k, (row, col) in enumerate(IBAR_ENTRIES):
        Ibar[row, col] = Ibar[col, row] = pi_i[4 + k]
    return Ibar


def body_parameters(m, h, Ibar) -> np.ndarray:
    """pi_i from mass, first moment and rotational inertia about the frame origin."""
    return np.concatenate(([m], h, [Ibar[row, col] for row, col in IBAR_ENTRIES]))


def pseudo_inertia(pi_i) -> np.ndarray:
    """J = [[Sigma, h], [h^T, m]] with Sigma = 1/2 tr(Ibar) 1 - Ibar"""
    Ibar = ibar_matrix(pi_i)
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(Ibar) * np.eye(3) - Ibar
    J[:3, 3] = J[3, :3] = pi_i[1:4]
    J[3, 3] = pi_i[0]
    return J


def from_pseudo_inertia(J) -> np.ndarray:
    """pi_i from J: m = J_33, h = J[:3, 3], Ibar = tr(Sigma) 1 - Sigma"""
    Sigma = 0.5 * (J[:3, :3] + J[:3, :3].T)
    return body_parameters(J[3, 3], J[:3, 3], np.trace(Sigma) * np.eye(3) - Sigma)


def from_rigid_body(mass, com, inertia) -> np.ndarray:
    """pi_i of a body with mass m, centre of mass c and rotational inertia I_c about c (all in
    one frame): h = m c, Ibar = I_c + m (|c|^2 1 - c c^T) (parallel axes)."""
    c = np.asarray(com, dtype=float)
    return body_parameters(mass, mass * c, np.asarray(inertia, dtype=float)
                           + mass * (c @ c * np.eye(3) - np.outer(c, c)))


def to_rigid_body(pi_i):
    """(m, c, I_c) of pi_i: the inverse of from_rigid_body (m must be positive)."""
    m = pi_i[0]
    c = pi_i[1:4] / m
    return m, c, ibar_matrix(pi_i) - m * (c @ c * np.eye(3) - np.outer(c, c))


def transform(pi_i, R, p) -> np.ndarray:
    """pi_i given in frame B, expressed in frame A where B has orientation R and origin p:
    J_A = T J_B T^T."""
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return from_pseudo_inertia(T @ pseudo_inertia(pi_i) @ T.T)


# where each theta entry sits in U (row, column); alpha scales all of U
_THETA_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def _log_cholesky_factor(theta):
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    return np.exp(alpha) * np.array([[np.exp(d1), s12, s13, t1],
                                     [0.0, np.exp(d2), s23, t2],
                                     [0.0, 0.0, np.exp(d3), t3],
                                     [0.0, 0.0, 0.0, 1.0]])


def log_cholesky_to_parameters(theta) -> np.ndarray:
    """pi_i(theta): J = U U^T (see the module docstring)"""
    U = _log_cholesky_factor(theta)
    return from_pseudo_inertia(U @ U.T)


def log_cholesky_jacobian(theta) -> np.ndarray:
    """d pi_i / d theta (10 x 10): dJ = dU U^T + U dU^T, and pi_i is linear in J."""
    U = _log_cholesky_factor(theta)
    columns = [from_pseudo_inertia(2.0 * U @ U.T)]          # alpha: dU = U
    for k, (row, col) in enumerate(_THETA_ENTRIES):
        dU = np.zeros((4, 4))
        dU[row, col] = U[row, col] if k < 3 else np.exp(theta[0])   # e^(alpha + d) or e^alpha
        columns.append(from_pseudo_inertia(dU @ U.T + U @ dU.T))
    return np.column_stack(columns)


def parameters_to_log_cholesky(pi_i, floor=1e-4) -> np.ndarray:
    """theta of pi_i. A J that is (nearly) semidefinite (point masses, thin rods) is first
    lifted to eigenvalues >= floor * m (kg m^2; 1e-4 m: 1 cm of spread) so that the factor
    exists and an optimiser starting there is not stuck where d/dd e^(2 d) ~ 0."""
    J = pseudo_inertia(pi_i)
    w, V = np.linalg.eigh(J)
    J = V @ np.diag(np.maximum(w, floor * max(J[3, 3], floor))) @ V.T
    # upper-triangular U with U U^T = J: reverse the rows and columns of a Cholesky factor
    flip = np.eye(4)[::-1]
    U = flip @ np.linalg.cholesky(flip @ J @ flip) @ flip
    alpha = np.log(U[3, 3])
    U = U / U[3, 3]
    return np.array([alpha, np.log(U[0, 0]), np.log(U[1, 1]), np.log(U[2, 2]), U[0, 1], U[1, 2],
                     U[0, 2], U[0, 3], U[1, 3], U[2, 3]])


def consistency_violations(model_or_pi, joint_names=None, tolerance=1e-12) -> list:
    """One message per body whose parameters are not physically consistent (m <= 0 with mass
    elsewhere, or a pseudo-inertia with a negative eigenvalue); empty when all are."""
    if joint_names is None:
        joint_names = model_or_pi.joint_names
        model_or_pi = model_or_pi.inertial_parameters()
    pi = np.asarray(model_or_pi, dtype=float).reshape(-1, PARAMETERS_PER_BODY)
    problems = []
    for name, pi_i in zip(joint_names, pi):
        lowest = np.linalg.eigvalsh(pseudo_inertia(pi_i))[0]
        if pi_i[0] < 0 or lowest < -tolerance * max(1.0, pi_i[0]):
            problems.append(f"body of joint {name!r}: m = {pi_i[0]:.6g}, smallest eigenvalue of "
                            f"the pseudo-inertia {lowest:.3g} (must be >= 0)")
    return problems


def link_body(model, link):
    """(body index, R, p): the body carrying `link` and the link frame's pose in it."""
    if link not in model.link_body:
        raise InputError(f"link {link!r} is not in the model (links: {list(model.link_names)})")
    body = model.link_body[link]
    if body < 0:
        raise InputError(f"link {link!r} is welded to the fixed base: a load on it does not "
                         "act on any joint")
    E, r = model.link_placement.get(link, (np.eye(3), np.zeros(3)))
    return body, np.asarray(E).T, np.asarray(r)


def payload_parameters(mass, com=(0.0, 0.0, 0.0), inertia=None) -> np.ndarray:
    """pi of a rigid payload in its link's frame. inertia about the COM: None (a point mass),
    three principal moments, or a 3x3 tensor."""
    try:
        moments = 0.0 if inertia is None else inertia
        values = np.concatenate(([mass], np.ravel(com), np.ravel(moments))).astype(float)
    except (TypeError, ValueError) as error:
        raise InputError(f"payload mass, com and inertia must be numbers: {error}") from None
    if not np.all(np.isfinite(values)):
        raise InputError(f"payload mass, com and inertia must be finite, got {values.tolist()}")
    if not mass >= 0:
        raise InputError(f"payload mass must be >= 0, got {mass}")
    if np.shape(com) != (3,):
        raise InputError(f"payload com must be 3 numbers (link frame), got {com!r}")
    I_c = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
    if I_c.shape == (3,):
        I_c = np.diag(I_c)
    if I_c.shape != (3, 3):
        raise InputError(f"payload inertia must be 3 moments or a 3x3 tensor, got {inertia!r}")
    pi_p = from_rigid_body(float(mass), com, I_c)
    if consistency_violations(pi_p, ["payload"], tolerance=1e-9):
        raise InputError(f"payload inertia {I_c.tolist()} is not physically consistent "
                         "(principal moments must be >= 0 and obey the triangle inequality)")
    return pi_p


def with_payload(model, link, mass, com=(0.0, 0.0, 0.0), inertia=None):
    """A copy of model with a rigid payload (mass, com and inertia about the COM, in the link
    frame) added to the body carrying `link`."""
    body, R, p = link_body(model, link)
    pi = model.inertial_parameters().reshape(-1, PARAMETERS_PER_BODY)
    pi[body] += transform(payload_parameters(mass, com, inertia), R, p)
    return model.with_inertial_parameters(pi)
