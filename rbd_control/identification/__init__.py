"""rbd_control.identification: inertial parameters, friction and payloads from recorded motion.

ROS-free. The model is linear in its unknowns,

    tau = Y(q, qd, qdd) pi + Y_f(qd) phi,

with pi = Model.inertial_parameters() (10 per body) and phi the joint friction (friction.py).

    regressor(model, q, qd, qdd) -> Y (nq, 10 nq); regressor_batch(model, Q, QD, QDD)
    base_parameters(model) -> BaseParameters (count, unidentifiable, base(pi))
    excitation_trajectory(model, duration, ...) -> FourierTrajectory (.sample, .waypoints)
    fit(model, t, q, tau, qd=None, friction=True, payload_link=None, ...) -> IdentificationResult
        (.model, .friction, .payload, .residual_rms, .condition_number, .predict, .to_urdf,
         .friction_yaml)
    Friction(joint_names, viscous, coulomb, epsilon); with_payload(model, link, mass, com, inertia)

Modules: base, excitation, filtering, fit, recording, result, cli (the rbd_identify command);
what the dynamics core keeps: inertial_parameters (pi, pseudo-inertia, log-Cholesky, payloads),
regressor, friction (rbd_control/dynamics/).
"""
from rbd_control.dynamics.friction import Friction
from rbd_control.dynamics.inertial_parameters import with_payload
from rbd_control.dynamics.regressor import regressor, regressor_batch
from rbd_control.identification.base import BaseParameters, base_parameters
from rbd_control.identification.excitation import FourierTrajectory, excitation_trajectory
from rbd_control.identification.fit import fit
from rbd_control.identification.result import IdentificationResult, Payload

__all__ = ["BaseParameters", "FourierTrajectory", "Friction", "IdentificationResult", "Payload",
           "base_parameters", "excitation_trajectory", "fit", "regressor", "regressor_batch",
           "with_payload"]
