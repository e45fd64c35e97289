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


def compile_kernels(processes: int = 1) -> None:
    """Compile (or load from numba's cache) every kernel of the package now instead of at
    each one's first call: scripts/setup_env.sh does it once per installation, so that no
    node compiles at its first state.

    processes > 1 shares the kernels among that many worker processes (setup_env.sh: one per
    core; a kernel compiles on one core, ~3-15 s each), which fill numba's on-disk cache that
    later processes load; this process's own kernels are then left to load on first call."""
    # the modules not imported above
    from rbd_control.dynamics import free_inertia, regressor  # noqa: F401
    from rbd_control.dynamics.spatial import KERNELS, compile_all
    if processes <= 1:
        compile_all()
        return
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(processes) as pool:
        # one kernel per task, so the pool balances them; the longest (the regressors, the
        # operational space) were imported last: those first
        list(pool.map(_compile_kernel, reversed(range(len(KERNELS)))))


def _compile_kernel(index: int) -> None:
    """compile_kernels' task in a worker process: the index-th kernel into the cache."""
    from rbd_control.dynamics import free_inertia, regressor  # noqa: F401
    from rbd_control.dynamics.spatial import KERNELS, compile_declared
    compile_declared(KERNELS[index])


__all__ = ["compile_kernels", "Data", "InputError", "Model", "ModelError", "RbdError", "bias",
           "coriolis_matrix", "crba", "crba_batch", "crba_diagonal_batch", "forward_dynamics",
           "gravity", "gravity_batch", "joint_forces", "load_urdf", "load_urdf_file",
           "momentum_observer_step", "momentum_terms", "rnea", "rnea_batch", "OperationalSpace",
           "FrameJacobian", "FrameWrench", "frame_bias_acceleration", "frame_jacobian",
           "frame_pose", "frame_pose_batch", "frame_velocity", "frame_wrench",
           "operational_space_inertia"]
