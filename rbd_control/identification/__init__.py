"""rbd_control.identification: inertial parameters, friction and payloads from recorded motion.

ROS-free. The model is linear in its unknowns,

    tau = Y(q, qd, qdd) pi + Y_f(qd) phi,

with pi = Model.inertial_parameters() (10 per body) and phi the joint friction (friction.py).

    regressor(model, q, qd, qdd) -> Y (nq, 10 nq); regressor_batch(model, Q, QD, QDD)
    base_parameters(model) -> BaseParameters (count, unidentifiable, base(pi))
    excitation_trajectory(model, duration, ...) -> FourierTrajectory (.sample, .to_joint_trajectory)
    fit(model, t, q, tau, qd=None, friction=True, payload_link=None, ...) -> IdentificationResult
        (.model, .friction, .payload, .residual_rms, .condition_number, .predict, .to_urdf,
         .friction_yaml)
    Friction(joint_names, viscous, coulomb, epsilon); with_payload(model, link, mass, com, inertia)

Modules: parameters (pi, pseudo-inertia, log-Cholesky, payloads), regressor, friction, base,
excitation, filtering, fit, result, cli (the rbd_identify command).
"""
from .base import BaseParameters, base_parameters
from .excitation import FourierTrajectory, excitation_trajectory
from .fit import fit
from .friction import Friction
from .parameters import with_payload
from .regressor import regressor, regressor_batch
from .result import IdentificationResult, Payload

__all__ = ["BaseParameters", "FourierTrajectory", "Friction", "IdentificationResult", "Payload",
           "base_parameters", "excitation_trajectory", "fit", "regressor", "regressor_batch",
           "with_payload"]
