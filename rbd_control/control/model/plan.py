"""What the controller needs of one model (config.ModelPlan), built from the model and the
ControllerConfig without touching a running controller: the command <-> model joint map, the
effort limits, the gains (defaults, then the config's overrides), the gravity-compensation
damping, the positions of joints nobody measures, the friction compensation, the
cartesian_impedance law and what the loop design softens of it (laws/loop_design.py: the design
is solved once per plan and handed to the gains and the law); and the corrections applied on
top of the URDF: joint friction compensation (dynamics/friction.py; the URDF's <dynamics> by
default, identified values on top) and a rigid payload on a link
(dynamics/inertial_parameters.py with_payload). Raises ConfigError with the reason. No rclpy.
"""
from __future__ import annotations

import numpy as np

from rbd_control.dynamics import RbdError

from rbd_control.control.config import ModelPlan
from rbd_control.control.errors import ConfigError, ControlError, TrajectoryError, brief
from rbd_control.control.laws import cartesian
from rbd_control.control.laws.gain_table import resolve, with_config
from rbd_control.control.laws.gains import default_gains
from rbd_control.control.laws.joint_impedance import JointImpedance
from rbd_control.control.laws.loop_design import (LoopDesign, design_bandwidth,
                                                  reference_inertia, zero_pose)
from rbd_control.dynamics.friction import Friction
from rbd_control.dynamics.inertial_parameters import with_payload
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.params.bounds import (MAX_PAYLOAD_INERTIA, MAX_PAYLOAD_MASS, MAX_PAYLOAD_OFFSET,
                                       MAX_PLAUSIBLE_POSITION, finite)
from rbd_control.params.controller import CONTROLLER_PARAMETERS

# the joint-limit wall's loop: the fastest the declared period and delay allow (bandwidth_hz's
# top), not the tracking bandwidth
WALL_MAX_BANDWIDTH_HZ = CONTROLLER_PARAMETERS["bandwidth_hz"].high

__all__ = ["plan_model", "plan_gains", "limit_gains", "designed_loop", "softened",
           "friction_compensation",
           "urdf_friction", "carrying_payload"]


def plan_model(model, config, warnings, mode=None) -> ModelPlan:
    """The ModelPlan of `model` under `config`; warnings: a ThrottledWarnings for the
    fixed_positions naming joints this model does not have; mode: the running mode (a model
    without the ee_link is refused while it is cartesian_impedance), default config.mode."""
    joints = tuple(config.joints) if config.joints is not None else tuple(model.joint_names)
    try:
        joint_map = JointMap.by_name(joints, model.joint_names, "the robot model")
    except KeyError as exc:
        raise ConfigError(exc.args[0]) from None
    effort_limit = _effort_limits(model, joint_map, config)
    design = designed_loop(config)
    gains = plan_gains(model, joint_map, effort_limit, config, design)
    damping = resolve(config.damping, joints, np.zeros(len(joints)), "damping")
    law = cartesian.from_config(model, config, joint_map, gains.reference_inertia, design, mode,
                                warnings, wall_bandwidth=wall_loop(config).omega)
    return ModelPlan(model, joint_map, effort_limit, gains, damping,
                     _fixed_positions(model, config, warnings),
                     friction_compensation(model, config.friction, config.friction_epsilon,
                                           config.use_urdf_friction),
                     cartesian=law, softened=softened(model, law),
                     joint_target=joint_target(config, joint_map, gains, model, warnings),
                     limit_gains=limit_gains(config, gains.reference_inertia,
                                             effort_limit * config.effort_scale,
                                             joint_map.take(np.asarray(model.velocity_limit))))


def limit_gains(config, inertia, effort, velocity) -> tuple:
    """(k_position, k_velocity, k_brake, inertia) of the soft joint limits
    (safety/joint_limits.py), command order, on the wall loop: the fastest loop the declared
    expected_state_period and expected_delay keep within the design's margins
    (laws/loop_design.py's design_bandwidth up to bandwidth_hz's top; bandwidth_hz itself only
    sizes tracking), its w and zeta:
        k_velocity = effort / velocity   (ros2_control's: the bound -k_velocity (qd - v_allowed)
                     grants the whole effort at rest and none at the velocity limit, so it shapes
                     nothing the law does away from the limits); 2 zeta w d_i where a joint has
                     no velocity limit
        k_brake    = 2 zeta w d_i        (the gain on a velocity above the allowed one: the
                     designed loop's kd on the joint's design inertia d_i, so braking is as
                     stable as the designed loop however light the joint: effort / velocity on
                     the default arm's wrist_3 is 30000 d_i, a velocity loop that diverged)
        k_position = w / (2 zeta)        (1/s): the wall k_position k_brake (q - soft) is the
                     designed stiffness w^2 d_i, and the joint approaches its soft limit with the
                     loop's time constant (safety/command_limits.py's soft_limits lowers it
                     so the allowed velocity falls to zero over two margins at least).
    inertia: the d_i k_brake is sized on (command_limits.py rescales it to the pose's)."""
    wall = wall_loop(config)
    d = np.asarray(inertia, dtype=float)
    zeta, omega = wall.damping_ratio, wall.omega
    velocity = np.asarray(velocity, dtype=float)
    k_brake = 2.0 * zeta * omega * d
    k_velocity = np.where(np.isfinite(velocity) & (velocity > 0.0),
                          np.asarray(effort, dtype=float) / velocity, k_brake)
    return np.full(d.size, omega / (2.0 * zeta)), k_velocity, k_brake, d


def joint_target(config, joint_map, gains, model, warnings) -> JointImpedance:
    """joint_impedance's law (laws/joint_impedance.py): its stiffness at most the wall loop's
    w^2 d_i, by default the model's default kp. ConfigError naming a stiffness beyond it."""
    try:
        return JointImpedance(joint_map.names, config.joint_impedance, gains.kp,
                              wall_loop(config).omega ** 2 * gains.reference_inertia,
                              joint_map.take(np.asarray(model.continuous, dtype=bool)),
                              warnings)
    except TrajectoryError as exc:
        raise ConfigError(str(exc)) from None


def wall_loop(config) -> LoopDesign:
    """The fastest loop the declared expected_state_period and expected_delay keep within the
    design's margins (bandwidth_hz's top): the joint-limit wall's, and the bound on
    joint_impedance's stiffness, w^2 d_i, and on a cartesian_stiffness set while the law runs,
    w^2 Lambda_ii(q)."""
    return design_bandwidth(float(config.expected_state_period), float(config.expected_delay),
                            float(config.damping_ratio), WALL_MAX_BANDWIDTH_HZ)


def designed_loop(config) -> LoopDesign:
    """The unit loop the default gains are designed on (laws/loop_design.py): the config's
    expected_state_period, expected_delay, damping_ratio and bandwidth_hz (the model does not
    enter it; design_bandwidth keeps the last ones solved)."""
    return design_bandwidth(float(config.expected_state_period), float(config.expected_delay),
                            float(config.damping_ratio), float(config.bandwidth_hz))


def plan_gains(model, joint_map, effort_limit, config, design=None):
    """The model's default gains (gains.py: the discrete-time rule on its inertia) for the joints
    of joint_map, with the config's overrides on top. design: the config's designed_loop, when
    the caller has it already."""
    try:
        design = designed_loop(config) if design is None else design
        base = default_gains(reference_inertia(model)[joint_map.index], design, effort_limit)
    except ControlError:
        raise
    except RbdError as exc:  # the dynamics refused the model's reference poses
        raise ConfigError(f"default gains: {exc}") from exc
    return with_config(base, joint_map.names, config)


def softened(model, law) -> tuple:
    """What the loop design softens of the Cartesian law on `model` (loop_design.Softened
    records; () without a law): the task stiffness at the model's zero pose (q = 0 clipped
    into the position limits, the first reference pose of the design), where Lambda(q)
    decides it (law.softened_at gives it at any other pose), and the nullspace stiffness. The
    joint gains are never softened by the design. Call it again when the model changes under
    the law (a payload)."""
    return () if law is None else law.softened_at(model, zero_pose(model))


def _fixed_positions(model, config, warnings):
    """Model-order values for joints missing from the states: fixed_positions, else 0."""
    fill = np.zeros(model.nq)
    position = {name: i for i, name in enumerate(model.joint_names)}
    for joint, value in (config.fixed_positions or {}).items():
        if joint not in position:
            warnings.once(f"fixed:{joint}", f"fixed_positions names {joint!r}, which "
                          f"robot {model.name!r} does not have; ignored")
        elif not (finite(value) and abs(float(value)) <= MAX_PLAUSIBLE_POSITION):
            raise ConfigError(f"fixed_positions for {joint} must be a finite position within "
                              f"+-{MAX_PLAUSIBLE_POSITION:g}, got {value!r}")
        else:
            fill[position[joint]] = float(value)
    return fill


def _effort_limits(model, joint_map, config):
    """|tau| bound per commanded joint: the URDF's <limit effort> or the config's override."""
    joints = joint_map.names
    urdf = joint_map.take(np.asarray(model.effort_limit, dtype=float))
    limits = resolve(config.effort_limit, joints, np.where(np.isfinite(urdf), urdf, 0.0),
                     "effort_limit")
    missing = [j for j, lim in zip(joints, limits) if not lim > 0.0]
    if missing:
        raise ConfigError(
            f"joints {brief(missing)} have no positive <limit effort> in the URDF; torque "
            "control needs one (set effort_limit in the controller config to override)")
    return limits


def friction_compensation(model, friction, epsilon, use_urdf=True) -> Friction:
    """{joint: {"viscous": b, "coulomb": f_c}} as a Friction in model order. Joints not named
    get the URDF's <dynamics damping friction> (viscous, Coulomb) with use_urdf, else none: the
    URDF's losses enter the feedforward the way its masses do, and identified (nonzero) values
    replace them joint by joint."""
    values = urdf_friction(model) if use_urdf else {}
    # zero is the friction.* parameters' unset value: it keeps the URDF's (use_urdf off
    # drops those)
    values.update({joint: given for joint, given in (friction or {}).items()
                   if not isinstance(given, dict) or any(given.values())})
    try:
        return Friction.from_dict(model.joint_names, values, epsilon)
    except (RbdError, AttributeError, TypeError) as exc:
        raise ConfigError(f"friction: {exc}") from None


def urdf_friction(model) -> dict:
    """{joint: {"viscous": damping, "coulomb": friction}} of the joints whose URDF declares
    nonzero <dynamics damping friction>."""
    return {joint: {"viscous": float(b), "coulomb": float(c)}
            for joint, b, c in zip(model.joint_names, model.damping, model.friction)
            if b > 0.0 or c > 0.0}


def carrying_payload(bare_model, link, mass, com, inertia):
    """bare_model with a rigid payload on `link` (mass kg; com and inertia about the COM, 3
    moments or 3x3, in the link frame); link None: bare_model itself (mass 0 adds nothing)."""
    _check_payload_bounds(mass, com, inertia)
    if link is None:
        return bare_model
    try:
        return with_payload(bare_model, link, mass, com, inertia)
    except (RbdError, TypeError) as exc:
        raise ConfigError(f"payload rejected: {exc}") from None


def _check_payload_bounds(mass, com, inertia):
    """ConfigError unless mass, com and inertia are finite and within the bounds: a finite but
    absurd payload (5e307 kg) makes every torque, the safe hold's too, non-finite."""
    if not (finite(mass) and 0.0 <= float(mass) <= MAX_PAYLOAD_MASS):
        raise ConfigError(f"payload rejected: mass must be finite and within "
                          f"[0, {MAX_PAYLOAD_MASS:g}] kg, got {mass!r}")
    try:
        com = np.asarray(com, dtype=float).reshape(-1)
        inertia = np.zeros(0) if inertia is None else np.asarray(inertia, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"payload rejected: com and inertia must be numbers, got {com!r}, "
                          f"{inertia!r}") from None
    if com.shape != (3,) or not (np.all(np.isfinite(com))
                                 and np.linalg.norm(com) <= MAX_PAYLOAD_OFFSET):
        raise ConfigError(f"payload rejected: com must be 3 numbers, finite and within "
                          f"{MAX_PAYLOAD_OFFSET:g} m of the link origin, got {com.tolist()}")
    if not (np.all(np.isfinite(inertia)) and np.all(np.abs(inertia) <= MAX_PAYLOAD_INERTIA)):
        raise ConfigError(f"payload rejected: inertia entries must be finite and within "
                          f"{MAX_PAYLOAD_INERTIA:g} kg m^2, got {inertia.tolist()}")
