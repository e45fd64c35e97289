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
excitation, filtering, fit, result, cli (the rbd_identify command). Names load on first use, so
importing the package (as the controller does for Friction) compiles nothing.
"""
import importlib

_EXPORTS = {
    "regressor": "regressor", "regressor_batch": "regressor",
    "base_parameters": "base", "BaseParameters": "base",
    "excitation_trajectory": "excitation", "FourierTrajectory": "excitation",
    "fit": "fit", "IdentificationResult": "result", "Payload": "result",
    "Friction": "friction", "with_payload": "parameters",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
