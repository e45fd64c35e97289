"""rbd_control.control — model-based joint torque control, ROS-free (never imports rclpy).

    from rbd_control.control import (
        Controller, ControllerConfig, Command, MODES,
        JointTrajectory, TrajectoryPoint,
        ControlError, StateError, MissingJointsError, TrajectoryError, ConfigError, GainError,
    )

ControllerConfig (dataclass): mode ('gravity_compensation' | 'feedforward_pd' | 'computed_torque'
    | 'cartesian_impedance'),
    joints (command order; None = all model joints), kp, kd, ki, i_clamp (None = model default,
    a number, a list in `joints` order, or {joint: value}), effort_scale (0, 1], state_timeout [s],
    safe_action ('hold' | 'zero'), damping (gravity_compensation), allow_partial_joints_goal,
    ignore_unknown_joints, bandwidth_hz (upper bound) / damping_ratio / expected_state_period /
    expected_delay (the discrete-time default-gain rule, loop_design.py), effort_limit (override),
    use_urdf_friction (URDF <dynamics> in the feedforward), oscillation (thresholds,
    safety/oscillation.py),
    fixed_positions ({joint: q} for model joints neither commanded nor in the states; else 0),
    allow_nonzero_velocity_at_trajectory_end,
    max_state_age [s] (older states soften the feedback, age_guard.py; 0 = off);
    cartesian_impedance: ee_link, cartesian_stiffness (N/m x3, N m/rad x3),
    cartesian_damping_ratio, nullspace_stiffness, nullspace_posture, max_cartesian_error (m, rad).

Controller(model, config):
    update(now, names, q, qd, age=None) -> Command
                                                names in any order, extra joints ignored;
                                                raises StateError(reason) for a bad state; a
                                                state lacking commanded joints gets the safe
                                                command (Command.reason says why); age: the
                                                state's age, for the age guard
    set_trajectory(trajectory, now)             raises TrajectoryError(reason)
    check_watchdog(now) -> Command | None       the safe command while states are stale
    set_mode(mode, now); set_gains(kp=, kd=, ki=, i_clamp=); set_model(model); hold(now)
    joint_names, gains, mode, trajectory_end_time, feedback_scale (age guard x oscillation),
    oscillation (the detector: detections, scale, reason), abort_reason
    set_pose_target(position, quaternion_xyzw, now); set_wrench_target(wrench, now)
                                                cartesian_impedance; TrajectoryError(reason)
    cartesian_state                             pose, target, error, wrench of the last step

Command: tau (command order, finite, clamped to effort_limit * effort_scale), desired_q,
    desired_qd, desired_qdd, error (continuous joints wrapped), feedforward, feedback (unclamped
    parts), mode ('...' or 'safe_hold' / 'safe_zero'), joint_names, saturated, holding,
    feedback_scale (< 1 while the age guard softens the gains).

JointTrajectory(joint_names, points, start_time=0.0) with
TrajectoryPoint(positions, velocities=None, accelerations=None, effort=None, time_from_start=0.0).

ModelSource(joints, gravity, build): the model's lifecycle (parse -> Candidate, install);
JointMap(names, index, size): one command <-> model order map (take / put).

Errors (errors.py): every refusal is a ControlError (a dynamics RbdError) subclass naming what
is wrong: ConfigError (GainError), StateError (MissingJointsError), TrajectoryError
(InvalidJointsError, OldTrajectoryError).
controller.warnings: repeated reasons as "reason + count" (throttle.py); log .due(now) each period.

Modules: controller (the face: one class composing the parts below and applying their
decisions), config (ControllerConfig, Command, ModelPlan), errors, angles, flags,
throttle; trajectory/ (message, validation: JTC's rules, CheckedGoal; polynomials, plan: the
blend and the plan; tolerances, path_limits), laws/ (joint: the control laws; gains: defaults
from the model; gain_table, inertia_schedule, integral; cartesian, cartesian_mode, pose:
Cartesian impedance),
safety/ (checks: state mapping, watchdog, effort limit, safe commands; supervisor: the loop's
watchers and their decisions; age_guard, oscillation, health), model/ (source: the model's
lifecycle; prepass; plan: what the controller needs of one model, friction and payload),
contact/ (observer, wrench, detection, monitor, config). The parameter tables and every
plausibility bound live in rbd_control/params/.
"""
from rbd_control.control.config import Command, ControllerConfig, ModelPlan
from rbd_control.control.controller import Controller
from rbd_control.control.errors import (ConfigError, ControlError, GainError, MissingJointsError,
                                        StateError, TrajectoryError)
from rbd_control.control.model.source import ModelRefused, ModelSource
from rbd_control.control.trajectory.message import JointTrajectory, TrajectoryPoint
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.params.controller import MODES

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
    "ControlError",
    "GainError",
    "MissingJointsError",
    "StateError",
    "JointTrajectory",
    "TrajectoryError",
    "TrajectoryPoint",
]
