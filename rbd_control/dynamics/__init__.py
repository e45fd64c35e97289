"""rbd_control.dynamics: rigid-body dynamics of URDF trees, plain Python + numpy + numba.

No rclpy here: usable and testable alone. The contract is in API.md beside this file.
Algorithms, one module each, in Featherstone's notation: jcalc, rnea, gravity, crba, ltdl,
forward_dynamics, coriolis, momentum (p, C^T qd and G for a momentum observer), kinematics
(frame pose, Jacobian, bias acceleration), operational_space (Lambda); closed_form is the
independent generalized d'Alembert formulation used to cross-check them.
"""
from rbd_control.dynamics.api import (bias, coriolis_matrix, crba, crba_batch, crba_diagonal_batch,
                                      forward_dynamics, gravity, gravity_batch, joint_forces,
                                      momentum_observer_step, momentum_terms, rnea, rnea_batch)
from rbd_control.dynamics.errors import InputError, ModelError, RbdError
from rbd_control.dynamics.model import Data, Model
from rbd_control.dynamics.task_space import (FrameJacobian, FrameWrench, OperationalSpace,
                                             frame_bias_acceleration, frame_jacobian,
                                             frame_pose, frame_pose_batch, frame_velocity,
                                             frame_wrench, operational_space_inertia)
from rbd_control.dynamics.urdf import load_urdf, load_urdf_file


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel of the package now instead of at
    each one's first call: scripts/setup_env.sh does it once per installation, so that no
    node compiles at its first state."""
    from rbd_control.dynamics import regressor  # noqa: F401  (the one module not imported above)
    from rbd_control.dynamics.spatial import compile_all
    compile_all()

__all__ = ["compile_kernels", "Data", "InputError", "Model", "ModelError", "RbdError", "bias", "coriolis_matrix",
           "crba", "crba_batch", "crba_diagonal_batch", "forward_dynamics", "gravity",
           "gravity_batch", "joint_forces", "load_urdf", "load_urdf_file",
           "momentum_observer_step", "momentum_terms", "rnea", "rnea_batch", "OperationalSpace",
           "FrameJacobian", "FrameWrench", "frame_bias_acceleration", "frame_jacobian", "frame_pose",
           "frame_pose_batch", "frame_velocity", "frame_wrench", "operational_space_inertia"]
