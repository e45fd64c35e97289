"""What a user configures (ControllerConfig), what one control step returns (Command), and
what the controller needs of one model (ModelPlan). The fields that are node parameters take
their defaults and checks from the parameter table (params/controller.py), and
`ControllerConfig.from_parameters` reads them from it: a field named like a parameter (or, in
the groups, like `contact.<field>`, `oscillation.<field>`, `joint_impedance.<field>`) needs no
other line. The gains (gains.<joint>.*, per joint) are read by the node and passed in."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

import numpy as np

from rbd_control.control.contact.config import ContactConfig
from rbd_control.control.errors import ConfigError, brief
from rbd_control.control.laws.gains import Gains
from rbd_control.control.laws.joint_impedance import JointImpedance, JointImpedanceConfig
from rbd_control.control.laws.per_joint import GainValue
from rbd_control.control.safety.command_limits import LimitsConfig
from rbd_control.control.safety.oscillation import OscillationThresholds
from rbd_control.dynamics.friction import Friction
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.dynamics.model import Model
from rbd_control.params.controller import CONTROLLER_PARAMETERS

if TYPE_CHECKING:
    from rbd_control.control.laws.cartesian import CartesianImpedance

__all__ = ["ControllerConfig", "Command", "ModelPlan", "contact_from_parameters"]

_DEFAULT = CONTROLLER_PARAMETERS.core_default
GAIN_VALUE = "GainValue"     # the annotation of a gain-like field (from __future__ annotations)


def contact_from_parameters(value: Callable[[str], Any]) -> Optional[ContactConfig]:
    """ControllerConfig.contact from the contact.* parameters (value(name) -> value): None
    unless contact.enabled."""
    if not value("contact.enabled"):
        return None
    return ContactConfig(**CONTROLLER_PARAMETERS.read(value, ContactConfig, "contact"))


@dataclass
class ControllerConfig:
    """Everything a user can set. Gain-like fields take None (model default), one number for
    every joint, a list in `joints` order, or a dict {joint: value} (default for the rest).
    A field named like a node parameter takes the parameter's default (`_DEFAULT`), its
    checks and, in from_parameters, its value."""

    mode: str = _DEFAULT("mode")
    joints: Optional[Sequence[str]] = _DEFAULT("joints")   # command order; None: every joint
    kp: GainValue = None                          # N m/rad
    kd: GainValue = None                          # N m s/rad
    ki: GainValue = None                          # N m/(rad s); 0 by default
    i_clamp: GainValue = None                     # N m bound on the integral term
    effort_scale: float = _DEFAULT("effort_scale")    # (0, 1]: fraction of <limit effort>
    state_timeout: float = _DEFAULT("state_timeout")  # s without a valid state -> safe action
    safe_action: str = _DEFAULT("safe_action")        # 'hold' (gravity at last pose) or 'zero'
    damping: GainValue = _DEFAULT("damping")      # N m s/rad, gravity_compensation only
    allow_partial_joints_goal: bool = _DEFAULT("allow_partial_joints_goal")
    allow_nonzero_velocity_at_trajectory_end: bool = _DEFAULT(
        "allow_nonzero_velocity_at_trajectory_end")
    ignore_unknown_joints: bool = True            # extra names in the state are skipped
    bandwidth_hz: float = _DEFAULT("bandwidth_hz")    # the loop design's upper bound
    damping_ratio: float = _DEFAULT("damping_ratio")
    # the loop the default gains are designed for, in discrete time (laws/loop_design.py)
    expected_state_period: float = _DEFAULT("expected_state_period")   # s
    expected_delay: float = _DEFAULT("expected_delay")                 # s
    effort_limit: GainValue = None                # overrides <limit effort> per joint
    # {joint: position} for model joints that are neither commanded nor in the joint states
    # (a locked torso joint, a gripper); the rest of those use the URDF zero. Warned once.
    fixed_positions: Optional[Mapping[str, float]] = _DEFAULT("fixed_positions")
    # joint friction added to the tracking modes' feedforward at the desired velocity:
    # {joint: {"viscous": N m s/rad, "coulomb": N m}} (dynamics/friction.py)
    friction: Optional[dict] = None
    # rad/s: tanh smoothing of the Coulomb term (friction.epsilon, applied with `friction`)
    friction_epsilon: float = _DEFAULT("friction.epsilon")
    # the URDF's <dynamics damping friction> in that feedforward too (friction above replaces
    # a joint's URDF values)
    use_urdf_friction: bool = _DEFAULT("use_urdf_friction")
    # feedforward_pd: default-rule gains follow the inertia at the measured pose
    # (laws/inertia_schedule.py)
    inertia_scheduling: bool = _DEFAULT("inertia_scheduling")
    # oscillation detection (safety/oscillation.py), the oscillation.* parameters
    oscillation: OscillationThresholds = field(default_factory=OscillationThresholds)
    max_state_age: float = _DEFAULT("max_state_age")  # s; older states soften the feedback; 0: off
    # cartesian_impedance (cartesian.py); Cartesian vectors are translation first
    ee_link: str = _DEFAULT("ee_link")            # "" = none (the mode is unavailable)
    cartesian_stiffness: Sequence[float] = _DEFAULT("cartesian_stiffness")
    cartesian_damping_ratio: float = _DEFAULT("cartesian_damping_ratio")
    nullspace_stiffness: GainValue = _DEFAULT("nullspace_stiffness")   # N m/rad
    nullspace_posture: GainValue = _DEFAULT("nullspace_posture")   # rad; None: at activation
    max_cartesian_error: Sequence[float] = _DEFAULT("max_cartesian_error")   # m, rad
    # streamed pose targets: filter (0: minimum-jerk moves) and timeout (0: off), s
    cartesian_filter_time_constant: float = _DEFAULT("cartesian_filter_time_constant")
    cartesian_target_timeout: float = _DEFAULT("cartesian_target_timeout")
    # external torque, wrench, collision detection and reaction (control/contact/); None: off
    contact: Optional[ContactConfig] = None
    # the robot adds g(q) itself: the published command omits it (safety/command_limits.py)
    robot_compensates_gravity: bool = _DEFAULT("robot_compensates_gravity")
    # joint-limit bounds and the torque rate, the limits.* parameters (command_limits.py)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    # joint_impedance's stiffness and target shaping (laws/joint_impedance.py)
    joint_impedance: JointImpedanceConfig = field(default_factory=JointImpedanceConfig)

    @classmethod
    def from_parameters(cls, value: Callable[[str], Any],
                        gains: Optional[Mapping[str, GainValue]] = None) -> ControllerConfig:
        """The config the parameters hold; value(name) gives a parameter's value (a node's
        parameter lookup). Every field named like a parameter is read, and the contact.*
        and oscillation.* groups; `gains`: {kp: {joint: value} or None, ...} besides (the
        per-joint gains.<joint>.* parameters given a value)."""
        table = CONTROLLER_PARAMETERS
        return cls(**table.read(value, cls), **(gains or {}),
                   contact=contact_from_parameters(value),
                   oscillation=OscillationThresholds(**table.read(value, OscillationThresholds,
                                                                  "oscillation")),
                   limits=LimitsConfig(**table.read(value, LimitsConfig, "limits")),
                   joint_impedance=JointImpedanceConfig(
                       **table.read(value, JointImpedanceConfig, "joint_impedance")))

    def check(self):
        """Raise ConfigError naming the first invalid field. A field named like a parameter is
        checked by the parameter's rules (params/controller.py)."""
        if self.joints is not None:
            joints = list(self.joints)
            if not joints or len(set(joints)) != len(joints):
                raise ConfigError(f"joints must be a non-empty list without duplicates, "
                                  f"got {brief(joints)}")
        reason = CONTROLLER_PARAMETERS.refusal(self, skip=self._checked_elsewhere())
        if reason:
            raise ConfigError(reason)
        if self.fixed_positions is not None and not isinstance(self.fixed_positions, Mapping):
            raise ConfigError(f"fixed_positions must be a mapping joint -> position, got "
                              f"{type(self.fixed_positions).__name__}")
        if self.mode == "cartesian_impedance" and not self.ee_link:
            raise ConfigError("mode cartesian_impedance needs ee_link (a link name)")
        if self.oscillation is not None:     # None: OscillationDetector's defaults
            self.oscillation.check()
        if self.contact is not None:
            self.contact.check()
        self.limits.check()
        self.joint_impedance.check()

    def _checked_elsewhere(self):
        """The fields the table cannot check as they are: fixed_positions (a mapping here, the
        parameter's entries are parsed into it), and the gain-like fields (damping,
        nullspace_stiffness, nullspace_posture: one value or per-joint values here), which
        laws/per_joint.py's resolve_per_joint checks per joint where it resolves them."""
        return {"fixed_positions"} | {f.name for f in fields(self) if f.type == GAIN_VALUE}


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

    model: Model
    joints: JointMap                 # command order <-> model order
    effort_limit: np.ndarray         # command order
    gains: Gains                     # defaults with the config's overrides, command order
    damping: np.ndarray              # command order
    fixed_positions: np.ndarray      # model order: for joints missing from the states
    friction: Optional[Friction] = None             # model order
    cartesian: Optional[CartesianImpedance] = None  # the cartesian_impedance law; no ee_link: None
    # what the loop design softens of the law: laws/loop_design.py's Softened records
    # (model/plan.py's softened: the task stiffness at the zero pose, the nullspace stiffness)
    softened: tuple = ()
    # (k_position 1/s, k_velocity and k_brake N m s/rad), command order: the soft joint
    # limits' gains where the URDF has no <safety_controller> (model/plan.py)
    limit_gains: tuple = ()
    # the joint_impedance law, its stiffness bounded by the declared loop (model/plan.py)
    joint_target: Optional[JointImpedance] = None
