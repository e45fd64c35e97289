"""Control laws on the rigid-body dynamics core. Pure functions of the state; no clamping here.

All vectors are in model joint order (length model.nq). Each law returns (feedforward, feedback);
the commanded torque is their sum. Position errors of continuous joints are wrapped to [-pi, pi].

  gravity_compensation  ff = G(q)                          fb = -D qd
  feedforward_pd        ff = ID(q, qd_d, qdd_d)            fb = Kp e + Kd (qd_d - qd) + i_term
  computed_torque       ff = ID(q, qd, qdd_d)              fb = H(q) (Kp' e + Kd' (qd_d - qd)
                                                                   + a_i)
                        i.e. tau = H(q)(qdd_d + Kp' e + Kd' e_dot) + C(q, qd) qd + G(q)

Holding a pose is not a law of its own: the controller tracks a constant "hold" plan with the
active law (feedforward_pd then gives G(q) + Kp (q_hold - q) - Kd qd).
Kp, Kd are torque gains (N m/rad, N m s/rad); Kp', Kd' are acceleration gains (1/s^2, 1/s).
"""
from __future__ import annotations

import numpy as np

from rbd_control.control.angles import wrap_to_pi

from rbd_control.dynamics import gravity, rnea

__all__ = [
    "position_error",
    "gravity_compensation",
    "feedforward_pd",
    "computed_torque",
]


def position_error(q_desired, q, continuous=None):
    """q_desired - q, wrapped to [-pi, pi) where `continuous` is True."""
    error = np.asarray(q_desired, dtype=float) - np.asarray(q, dtype=float)
    if continuous is not None:
        error[continuous] = wrap_to_pi(error[continuous])
    return error


def gravity_compensation(model, q, qd, damping=None):
    """Float the arm: cancel gravity, optionally add viscous damping -D qd."""
    feedforward = gravity(model, q)
    if damping is None:
        return feedforward, np.zeros_like(feedforward)
    return feedforward, -np.asarray(damping, dtype=float) * np.asarray(qd, dtype=float)


def feedforward_pd(model, q, qd, q_d, qd_d, qdd_d, kp, kd, *, continuous=None, i_term=None,
                   error=None):
    """Inverse dynamics of the desired motion at the measured pose plus joint PD (+ integral).

    The model term uses the measured q (so gravity is right where the arm actually is) and
    the desired velocity/acceleration (so noise in qd does not enter the feedforward).
    error: position_error(q_d, q, continuous), when the caller has computed it already.
    """
    feedforward = rnea(model, q, qd_d, qdd_d)
    if error is None:
        error = position_error(q_d, q, continuous)
    feedback = kp * error + kd * (np.asarray(qd_d) - np.asarray(qd))
    if i_term is not None:
        feedback = feedback + i_term
    return feedforward, feedback


def computed_torque(model, q, qd, q_d, qd_d, qdd_d, kp_acc, kd_acc, *, continuous=None, acc_i=None,
                    error=None):
    """Feedback-linearising law: every joint sees e'' + Kd' e' + Kp' e = 0 on an exact model.

    Two RNEA calls: one for the feedforward part (reported separately for diagnostics) and
    one for the total; their difference is H(q) times the feedback acceleration.
    error: position_error(q_d, q, continuous), when the caller has computed it already.
    """
    if error is None:
        error = position_error(q_d, q, continuous)
    feedback_acc = kp_acc * error + kd_acc * (np.asarray(qd_d) - np.asarray(qd))
    if acc_i is not None:
        feedback_acc = feedback_acc + acc_i
    feedforward = rnea(model, q, qd, qdd_d)
    total = rnea(model, q, qd, np.asarray(qdd_d) + feedback_acc)
    return feedforward, total - feedforward
