"""rbd_control.control — model-based joint torque control, ROS-free (never imports rclpy).

    from rbd_control.control import (
        Controller, ControllerConfig, Command, MODES,
        JointTrajectory, TrajectoryPoint,
        StateError, TrajectoryError, ConfigError,
    )

ControllerConfig (dataclass): mode ('gravity_compensation' | 'feedforward_pd' | 'computed_torque'
    | 'cartesian_impedance'),
    joints (command order; None = all model joints), kp, kd, ki, i_clamp (None = model default,
    a number, a list in `joints` order, or {joint: value}), effort_scale (0, 1], state_timeout [s],
    safe_action ('hold' | 'zero'), damping (gravity_compensation), allow_partial_joints_goal,
    ignore_unknown_joints, bandwidth_hz / damping_ratio (default-gain rule), effort_limit (override);
    cartesian_impedance: ee_link, cartesian_stiffness (N/m x3, N m/rad x3),
    cartesian_damping_ratio, nullspace_stiffness, nullspace_posture, max_cartesian_error (m, rad).

Controller(model, config):
    update(now, names, q, qd) -> Command        names in any order, extra joints ignored;
                                                raises StateError(reason) for a bad state
    set_trajectory(trajectory, now)             raises TrajectoryError(reason)
    check_watchdog(now) -> Command | None       the safe command while states are stale
    set_mode(mode, now); set_gains(kp=, kd=, ki=, i_clamp=); set_model(model); hold(now)
    joint_names, gains, mode, trajectory_end_time
    set_pose_target(position, quaternion_xyzw, now); set_wrench_target(wrench, now)
                                                cartesian_impedance; TrajectoryError(reason)
    cartesian_state                             pose, target, error, wrench of the last step

Command: tau (command order, finite, clamped to effort_limit * effort_scale), desired_q,
    desired_qd, desired_qdd, error (continuous joints wrapped), feedforward, feedback (unclamped
    parts), mode ('...' or 'safe_hold' / 'safe_zero'), joint_names, saturated, holding.

JointTrajectory(joint_names, points, start_time=0.0) with
TrajectoryPoint(positions, velocities=None, accelerations=None, effort=None, time_from_start=0.0).

ModelSource(joints, gravity, build): the model's lifecycle (parse -> Candidate, install);
JointMap(names, index, size): one command <-> model order map (take / put).

Modules: trajectory (sampling, JTC semantics), laws (the control laws), gains (defaults from the
model), safety (state validation, watchdog, effort limits), controller (ties them together),
config (ControllerConfig, Command, ModelPlan), parameters + parameter_table (the node's
parameters, defined once), model_source, joint_map, angles, cartesian (the impedance law) and pose
(quaternions, pose targets).
"""
from .controller import MODES, Command, Controller, ControllerConfig, ModelPlan
from .joint_map import JointMap
from .model_source import ModelRefused, ModelSource
from .safety import ConfigError, StateError
from .trajectory import JointTrajectory, TrajectoryError, TrajectoryPoint

__all__ = [
    "MODES",
    "Command",
    "Controller",
    "ControllerConfig",
    "JointMap",
    "ModelPlan",
    "ModelRefused",
    "ModelSource",
    "ConfigError",
    "StateError",
    "JointTrajectory",
    "TrajectoryError",
    "TrajectoryPoint",
]
