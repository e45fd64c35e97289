"""What a user configures (ControllerConfig), what one control step returns (Command), and
what the controller needs of one model (ModelPlan). Defaults and checks of the fields that
are node parameters come from the parameter table (parameters.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import numpy as np

from rbd_control.control.contact.config import ContactConfig
from rbd_control.control.errors import ConfigError, brief
from rbd_control.control.laws.gains import Gains
from rbd_control.control.laws.per_joint import GainValue
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.params.bounds import MAX_BANDWIDTH_HZ, MAX_DAMPING_RATIO
from rbd_control.params.controller import CONTROLLER_PARAMETERS, FRICTION_EPSILON
from rbd_control.params.table import finite_number

__all__ = ["ControllerConfig", "Command", "ModelPlan", "CheckedGoal"]

_DEFAULT = CONTROLLER_PARAMETERS.default
# The ControllerConfig fields that are node parameters: checked by the table's rules.
_TABLE_CHECKED = ("mode", "safe_action", "effort_scale", "state_timeout", "max_state_age",
                  "cartesian_stiffness", "cartesian_damping_ratio", "max_cartesian_error",
                  "expected_state_period", "expected_delay")


@dataclass
class ControllerConfig:
    """Everything a user can set. Gain-like fields take None (model default), one number for
    every joint, a list in `joints` order, or a dict {joint: value} (default for the rest)."""

    mode: str = _DEFAULT("mode")
    joints: Optional[Sequence[str]] = None        # command order; None = every model joint
    kp: GainValue = None                          # N m/rad
    kd: GainValue = None                          # N m s/rad
    ki: GainValue = None                          # N m/(rad s); 0 by default
    i_clamp: GainValue = None                     # N m bound on the integral term
    effort_scale: float = _DEFAULT("effort_scale")    # (0, 1]: fraction of <limit effort>
    state_timeout: float = _DEFAULT("state_timeout")  # s without a valid state -> safe action
    safe_action: str = _DEFAULT("safe_action")        # 'hold' (gravity at last pose) or 'zero'
    damping: GainValue = None                     # N m s/rad, gravity_compensation only; 0
    allow_partial_joints_goal: bool = _DEFAULT("allow_partial_joints_goal")
    allow_nonzero_velocity_at_trajectory_end: bool = _DEFAULT("allow_nonzero_velocity_at_trajectory_end")
    ignore_unknown_joints: bool = True            # extra names in the state are skipped
    bandwidth_hz: float = _DEFAULT("bandwidth_hz")    # default-gain rule (gains.py): upper bound
    damping_ratio: float = _DEFAULT("damping_ratio")
    # the loop the default gains are designed for, in discrete time (gains.py)
    expected_state_period: float = _DEFAULT("expected_state_period")   # s
    expected_delay: float = _DEFAULT("expected_delay")                 # s
    effort_limit: GainValue = None                # overrides <limit effort> per joint
    # {joint: position} for model joints that are neither commanded nor in the joint states
    # (a locked torso joint, a gripper); the rest of those use the URDF zero. Warned once.
    fixed_positions: Optional[Mapping[str, float]] = None
    # joint friction added to the tracking modes' feedforward at the desired velocity:
    # {joint: {"viscous": N m s/rad, "coulomb": N m}} (identification/friction.py)
    friction: Optional[dict] = None
    friction_epsilon: float = FRICTION_EPSILON    # rad/s: tanh smoothing of the Coulomb term
    # the URDF's <dynamics damping friction> in that feedforward too (friction above replaces
    # a joint's URDF values)
    use_urdf_friction: bool = _DEFAULT("use_urdf_friction")
    # feedforward_pd: default-rule gains follow the inertia at the measured pose
    # (laws/inertia_schedule.py)
    inertia_scheduling: bool = _DEFAULT("inertia_scheduling")
    # oscillation detection (safety/oscillation.py); None: the table's defaults
    oscillation: Optional[object] = None
    max_state_age: float = _DEFAULT("max_state_age")  # s; older states soften the feedback; 0: off
    # cartesian_impedance (cartesian.py); Cartesian vectors are translation first
    ee_link: str = _DEFAULT("ee_link")            # "" = none (the mode is unavailable)
    cartesian_stiffness: Sequence[float] = tuple(_DEFAULT("cartesian_stiffness"))
    cartesian_damping_ratio: float = _DEFAULT("cartesian_damping_ratio")
    nullspace_stiffness: GainValue = _DEFAULT("nullspace_stiffness")   # N m/rad
    nullspace_posture: GainValue = None           # rad; None = the pose at activation
    max_cartesian_error: Sequence[float] = tuple(_DEFAULT("max_cartesian_error"))  # m, rad
    # external torque, wrench, collision detection and reaction (control/contact/); None: off
    contact: Optional[ContactConfig] = None

    def check(self):
        """Raise ConfigError naming the first invalid field."""
        for name in _TABLE_CHECKED:
            reason = CONTROLLER_PARAMETERS.validate(name, getattr(self, name))
            if reason:
                raise ConfigError(reason)
        for name, top in (("bandwidth_hz", MAX_BANDWIDTH_HZ), ("damping_ratio", MAX_DAMPING_RATIO)):
            value = getattr(self, name)
            if not (finite_number(value) and 0.0 < value <= top):
                raise ConfigError(f"{name} must be in (0, {top:g}], got {value!r}")
        if self.fixed_positions is not None and not isinstance(self.fixed_positions, Mapping):
            raise ConfigError(f"fixed_positions must be a mapping joint -> position, got "
                              f"{type(self.fixed_positions).__name__}")
        if self.mode == "cartesian_impedance" and not self.ee_link:
            raise ConfigError("mode cartesian_impedance needs ee_link (a link name)")
        if self.contact is not None:
            self.contact.check()
        if self.joints is not None:
            joints = list(self.joints)
            if not joints or len(set(joints)) != len(joints):
                raise ConfigError(f"joints must be a non-empty list without duplicates, got {brief(joints)}")


@dataclass
class Command:
    """One control output. Vectors are in command order; feedforward and feedback are the
    law's two parts before clamping, tau the clamped sum."""

    tau: np.ndarray
    desired_q: np.ndarray
    desired_qd: np.ndarray
    desired_qdd: np.ndarray
    error: np.ndarray
    feedforward: np.ndarray
    feedback: np.ndarray
    mode: str                                  # the law used, or 'safe_hold' / 'safe_zero'
    joint_names: tuple = ()
    saturated: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    holding: bool = False                      # no trajectory in progress
    reason: str = ""                           # why a safe command was chosen, if it was
    actual_q: np.ndarray = field(default_factory=lambda: np.zeros(0))   # the measured state
    actual_qd: np.ndarray = field(default_factory=lambda: np.zeros(0))  # in command order
    feedback_scale: float = 1.0                # < 1 while the state-age guard softens the gains

    @classmethod
    def at_rest(cls, mode, joint_names, q_hold, tau, feedforward, saturated) -> "Command":
        """A safe command: hold q_hold with no motion desired and no feedback."""
        zeros = [np.zeros(len(joint_names)) for _ in range(4)]
        return cls(tau=tau, desired_q=q_hold, desired_qd=zeros[0], desired_qdd=zeros[1],
                   error=zeros[2], feedforward=feedforward, feedback=zeros[3], mode=mode,
                   joint_names=joint_names, saturated=saturated, holding=True)


@dataclass(frozen=True)
class ModelPlan:
    """What the controller needs of one model, built without touching the running controller
    (Controller.prepare_model), so a model source can check a description fully before it
    commits to it, and install it later with a cheap swap (Controller.set_model)."""

    model: object
    joints: JointMap                 # command order <-> model order
    effort_limit: np.ndarray         # command order
    gains: Gains                     # defaults with the config's overrides, command order
    damping: np.ndarray              # command order
    fixed_positions: np.ndarray      # model order: for joints missing from the states
    friction: object = None          # identification.Friction, model order
    cartesian: object = None         # the cartesian_impedance law (None without ee_link)
    # what the loop design softens of the law: laws/loop_design.py's Softened records
    # (model/plan.py's softened: the task stiffness at the zero pose, the nullspace stiffness)
    softened: tuple = ()


@dataclass(frozen=True)
class CheckedGoal:
    """A trajectory checked against one model (Controller.check_trajectory), to install."""

    checked: object                  # trajectory_validation.ValidatedTrajectory
    model: object
    joint_names: tuple
