"""Fitting inertial parameters, friction and payloads to a recording.

    tau = Y(q, qd, qdd) pi + Y_f(qd) phi            (regressor.py, friction.py)

1. Filter and differentiate (filtering.py), keep ~DECIMATE_HZ samples per second (the signals
   are band-limited far below that), stack A x = b over all samples.
2. Weighted least squares (Gautier & Poignet 2001): each joint's rows are divided by that
   joint's residual standard deviation from an ordinary least-squares pass, so a wrist's small
   torques count as much as a shoulder's. Rows of a joint moving slower than min_speed are left
   out when friction is fitted (Coulomb friction is least like tanh near zero speed).
3. A thin QR of the weighted A leaves a p x p problem, ||R x - c||, with p = 12 per joint.
4. Physical consistency (Rucker & Wensing 2022): every body's pi is the log-Cholesky image of
   an unconstrained theta (dynamics/inertial_parameters.py), phi >= 0 by bounds, and
   scipy.optimize.least_squares minimises ||R x(theta, phi) - c||^2 plus a small pull towards
   the prior model, which decides the directions the data cannot see (the non-base parameters)
   and nothing else.

With payload_link, the arm's pi is kept and only the payload (10 parameters in the link's frame,
log-Cholesky too) and the friction are fitted, to tau - Y pi_arm.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from rbd_control.dynamics.checks import as_batch
from rbd_control.dynamics.errors import InputError
from rbd_control.dynamics.model import PARAMETERS_PER_BODY as P

from rbd_control.dynamics.friction import DEFAULT_EPSILON, Friction, friction_columns
from rbd_control.dynamics.inertial_parameters import (from_rigid_body, link_body,
                                                      log_cholesky_jacobian,
                                                      log_cholesky_to_parameters,
                                                      parameters_to_log_cholesky, transform)
from rbd_control.dynamics.regressor import regressor_batch
from rbd_control.identification.base import base_parameters
from rbd_control.identification.filtering import DEFAULT_CUTOFF_HZ, filtered_states
from rbd_control.identification.result import IdentificationResult, Payload

DECIMATE_HZ = 200.0
CHUNK = 2000                 # samples per regressor batch (progress granularity)
THETA_BOUND = 30.0           # |log-Cholesky entries|: e^60 keeps U U^T finite
PAYLOAD_RADIUS = 0.05        # m, of the sphere that starts a payload fit
MAX_ITERATIONS = 500         # least_squares evaluations (it converges in tens)
PRIOR_WEIGHT = 1e-4          # pull towards the prior, relative to the data's scale


def fit(model, t, q, tau, qd=None, friction=True, payload_link=None, *,
        cutoff_hz=DEFAULT_CUTOFF_HZ, epsilon=DEFAULT_EPSILON, min_speed=None, progress=None):
    """Identify model's inertial parameters (or only a payload on payload_link) and joint
    friction from samples: t (N,), q and tau (N, nq) in model.joint_names order, qd optional.

    min_speed: rad/s below which a joint's rows are not used when friction is fitted
    (default 5 epsilon). progress(fraction, stage): optional callback.
    Returns an IdentificationResult.
    """
    report = progress or (lambda fraction, stage: None)
    t = np.asarray(t, dtype=float).reshape(-1)
    q, tau = as_batch(q, "q", model.nq), as_batch(tau, "tau", model.nq)
    qd = None if qd is None else as_batch(qd, "qd", model.nq)
    if not (q.shape[0] == tau.shape[0] == t.size) or (qd is not None and qd.shape != q.shape):
        raise InputError(f"t, q, tau (and qd) must have the same number of samples, got "
                         f"{t.size}, {q.shape[0]}, {tau.shape[0]}")
    report(0.0, "filtering")
    t, q, qd, qdd, tau = _decimated(filtered_states(t, q, tau, qd, cutoff_hz))
    Y = _regressor(model, q, qd, qdd, report)
    F = friction_columns(qd, epsilon) if friction else np.zeros((t.size, model.nq, 0))
    used = _used_rows(qd, friction, 5 * epsilon if min_speed is None else min_speed)
    report(0.9, "fitting")
    if payload_link is None:
        result = _fit_model(model, Y, F, tau, used)
    else:
        result = _fit_payload(model, payload_link, Y, F, tau, used)
    pi, phi, condition, payload = result
    identified = model.with_inertial_parameters(pi)
    friction_model = (Friction.from_parameters(model.joint_names, phi, epsilon) if friction
                      else Friction.none(model.joint_names, epsilon))
    out = IdentificationResult(identified, friction_model, payload, np.zeros(model.nq),
                               condition, base_parameters(model))
    residual = tau - out.predict(q, qd, qdd)
    out = out.with_residual(np.sqrt(np.mean(np.square(residual), axis=0)))
    report(1.0, "done")
    return out


def _decimated(states):
    t = states[0]
    step = max(1, int(round(1.0 / (DECIMATE_HZ * np.median(np.diff(t))))))
    return tuple(x[::step] for x in states)


def _regressor(model, q, qd, qdd, report):
    Y = np.empty((q.shape[0], model.nq, P * model.nq))
    for start in range(0, q.shape[0], CHUNK):
        part = slice(start, start + CHUNK)
        Y[part] = regressor_batch(model, q[part], qd[part], qdd[part])
        report(0.1 + 0.8 * min(start + CHUNK, q.shape[0]) / q.shape[0], "regressor")
    return Y


def _used_rows(qd, friction, min_speed):
    """(N, nq) bool: the equations that enter the fit."""
    return np.abs(qd) >= min_speed if friction else np.ones(qd.shape, bool)


def _weighted(A, b, used, columns):
    """Rows of A x = b scaled by 1 / sigma_j per joint, sigma_j from an ordinary least-squares
    fit on `columns`; returns the (p, p) R, c of the thin QR and the condition number."""
    rows = used.reshape(-1)
    A2, b2 = A.reshape(-1, A.shape[-1])[rows], b.reshape(-1)[rows]
    x, *_ = np.linalg.lstsq(A2[:, columns], b2, rcond=None)
    residual = np.zeros(b.shape)
    residual[used] = b2 - A2[:, columns] @ x
    counts = np.maximum(used.sum(axis=0), 1)
    sigma = np.sqrt(np.sum(np.square(residual), axis=0) / counts)
    sigma = np.maximum(sigma, 1e-6 * max(sigma.max(), 1e-12))
    w = np.broadcast_to(1.0 / sigma, used.shape)[used]
    A2, b2 = A2 * w[:, None], b2 * w
    Q, R = scipy.linalg.qr(A2, mode="economic")
    scaled = A2[:, columns] / np.maximum(np.linalg.norm(A2[:, columns], axis=0), 1e-300)
    return R, Q.T @ b2, float(np.linalg.cond(scaled))


def _fit_model(model, Y, F, tau, used):
    p_in = P * model.nq
    base = base_parameters(model)
    A = np.concatenate((Y, F), axis=2)
    columns = np.concatenate((base.independent, p_in + np.arange(F.shape[2])))
    R, c, condition = _weighted(A, tau, used, columns)
    prior = model.inertial_parameters().reshape(model.nq, P)
    phi0 = _initial_friction(R, c, p_in, F.shape[2])
    pi, phi = _consistent_solution(R, c, prior, phi0)
    return pi, phi, condition, None


def _fit_payload(model, link, Y, F, tau, used):
    body, Rot, p = link_body(model, link)
    # pi_body += T pi_payload, T linear: the transform of each unit parameter vector
    T = np.column_stack([transform(e, Rot, p) for e in np.eye(P)])
    A = np.concatenate((Y[:, :, P * body:P * (body + 1)] @ T, F), axis=2)
    pi_arm = model.inertial_parameters()
    R, c, condition = _weighted(A, tau - Y @ pi_arm, used, np.arange(A.shape[2]))
    x_ls = np.linalg.lstsq(R, c, rcond=None)[0]
    # prior and start: a solid sphere of the least-squares mass and centre, radius
    # PAYLOAD_RADIUS (a degenerate start would leave the log-Cholesky gradients ~0)
    mass = max(x_ls[0], 1e-3)
    prior = from_rigid_body(mass, x_ls[1:4] / mass if x_ls[0] > 1e-3 else np.zeros(3),
                            0.4 * mass * PAYLOAD_RADIUS ** 2 * np.eye(3))
    pi_p, phi = _consistent_solution(R, c, prior[None, :], np.maximum(x_ls[P:], 0.0))
    pi = pi_arm.reshape(-1, P).copy()
    pi[body] += T @ pi_p
    return pi.ravel(), phi, condition, Payload.from_parameters(link, pi_p)


def _consistent_solution(R, c, prior, phi0):
    """min ||R [pi; phi] - c||^2 + ||pull (pi - prior)||^2 over physically consistent bodies
    (pi = the log-Cholesky image of theta, one block per row of prior) and phi >= 0, from
    theta(prior), phi0. Returns (pi, phi)."""
    import scipy.optimize  # ~1 s to import: not at import of the package
    bodies, p_in = prior.shape[0], prior.size
    pull = _prior_weights(prior, R)
    blocks = [slice(P * i, P * (i + 1)) for i in range(bodies)]

    def residual(z):
        pi = np.concatenate([log_cholesky_to_parameters(z[b]) for b in blocks])
        return np.concatenate((R @ np.concatenate((pi, z[p_in:])) - c,
                               pull * (pi - prior.ravel())))

    def jacobian(z):
        # d pi / d theta is block diagonal; phi enters linearly
        D = scipy.linalg.block_diag(*[log_cholesky_jacobian(z[b]) for b in blocks])
        top = np.concatenate((R[:, :p_in] @ D, R[:, p_in:]), axis=1)
        bottom = np.concatenate((pull[:, None] * D, np.zeros((p_in, z.size - p_in))), axis=1)
        return np.concatenate((top, bottom))

    z0 = np.concatenate([parameters_to_log_cholesky(pi_i) for pi_i in prior] + [phi0])
    lower, upper = np.full(z0.size, -THETA_BOUND), np.full(z0.size, THETA_BOUND)
    lower[p_in:], upper[p_in:] = 0.0, np.inf
    result = scipy.optimize.least_squares(residual, np.clip(z0, lower, upper), jac=jacobian,
                                          bounds=(lower, upper), x_scale="jac", method="trf",
                                          # no SVD per step: on a loaded machine a threaded
                                          # BLAS made each one take ~0.2 s
                                          tr_solver="lsmr",
                                          ftol=1e-12, xtol=1e-12, gtol=1e-12,
                                          max_nfev=MAX_ITERATIONS)
    z = result.x
    return np.concatenate([log_cholesky_to_parameters(z[b]) for b in blocks]), z[p_in:]


def _initial_friction(R, c, p_in, count):
    if count == 0:
        return np.zeros(0)
    return np.maximum(np.linalg.lstsq(R, c, rcond=None)[0][p_in:], 0.0)


def _prior_weights(prior, R, length=0.1):
    """PRIOR_WEIGHT * |R| / scale per parameter. A body's scales: its mass m for the mass,
    m L for the first moment and m L^2 for the inertia (L = `length`, m), or the prior's own
    entry where larger."""
    m = np.maximum(np.abs(prior[:, :1]), 1e-3)
    groups = np.concatenate((m, np.repeat(m * length, 3, axis=1),
                             np.repeat(m * length ** 2, 6, axis=1)), axis=1)
    scale = np.maximum(np.abs(prior), groups)
    return PRIOR_WEIGHT * np.linalg.norm(R, 2) / scale.ravel()
