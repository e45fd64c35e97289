"""The rbd_controller node's parameters: the one definition (see table.py).

A new parameter is one entry here plus its use. ControllerConfig takes its defaults and
checks from this table, and `ControllerConfig.from_parameters` reads every field named like a
parameter (and the groups: oscillation.*, limits.*, joint_impedance.*, and contact.*, whose
entries are in params/contact.py) from it; the node declares, describes
and validates from it; the documentation's parameter reference is built from it
(doc/reference/parameters.md).
"""
import math


from rbd_control.params.bounds import MAX_KP, MAX_PAYLOAD_MASS
from rbd_control.params.contact import CONTACT_PARAMETERS
from rbd_control.params.table import (JOINT, Parameter, ParameterTable, finite_number,
                                      finite_numbers_of_length, not_empty, positive)

__all__ = ["MODES", "TRACKING_MODES", "SAFE_ACTIONS", "GAIN_FIELDS", "CONTROLLER_PARAMETERS",
           "DEFAULT_COMMAND_TOPIC", "MAX_GAIN", "gain_name", "gain_field", "fixed_positions",
           "friction_name"]

MODES = ("gravity_compensation", "feedforward_pd", "computed_torque", "cartesian_impedance",
         "joint_impedance", "shadow")
TRACKING_MODES = ("feedforward_pd", "computed_torque")
# rad/s over which the Coulomb friction term reaches f_c (tanh): the table default of
# friction.epsilon. A literal, not identification.friction.DEFAULT_EPSILON, so that reading the
# table (rbd_controller --help) compiles no kernels; test_parameters checks they agree.
FRICTION_EPSILON = 0.01
SAFE_ACTIONS = ("hold", "zero")
# relative, like every topic of the nodes: a namespace (__ns:=/left) moves it to
# /left/effort_controller/commands, where a namespaced controller_manager's effort_controller
# listens (bringup/namespaces.py says which names stay absolute)
DEFAULT_COMMAND_TOPIC = "effort_controller/commands"
# A gain above this is a typo, not a tuning choice; a bounded range also shows in rqt. The
# core's bound (bounds.py), so every default the core derives can be shown as a parameter.
MAX_GAIN = MAX_KP
# A tolerance above this is a typo (rad, m, s): 0 already means "not checked".
MAX_TOLERANCE = 1.0e6
# Gain parameter field -> the Gains / ControllerConfig field it sets.
GAIN_FIELDS = {"p": "kp", "d": "kd", "i": "ki", "i_clamp": "i_clamp"}


def gain_name(joint: str, field: str) -> str:
    return f"gains.{joint}.{field}"


def gain_field(name: str):
    """(joint, ControllerConfig field) for a gain parameter's name; None for another name."""
    found = CONTROLLER_PARAMETERS.lookup(name)
    if found is None or found[1] is None:
        return None
    core = _GAIN_TEMPLATES.get(found[0].name)
    return None if core is None else (found[1], core)


def _check_gravity(value):
    values = list(value or [])
    if len(values) not in (0, 3):
        return f"gravity needs 3 values [x, y, z] (or none), got {len(values)}"
    if not all(finite_number(v) for v in values):
        return "gravity values must be finite numbers"
    return None


def _check_joints(value):
    names = list(value or [])
    if len(set(names)) != len(names):
        return "joints lists a joint twice"
    if any(not n for n in names):
        return "joints contains an empty name"
    return None


def fixed_positions(entries):
    """["joint=value", ...] -> {joint: value} (None for none); ValueError with the reason."""
    out = {}
    for entry in entries or []:
        joint, sep, value = str(entry).partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not joint.strip() or number is None or not math.isfinite(number):
            raise ValueError(f"fixed_positions entry {entry!r} is not 'joint=finite number'")
        out[joint.strip()] = number
    return out or None


def _check_fixed_positions(value):
    try:
        fixed_positions(value)
    except ValueError as error:
        return str(error)
    return None


def friction_name(joint: str, field: str) -> str:
    return f"friction.{joint}.{field}"


def _check_numbers(count, what, positive_only=True):
    """A check for a double_array of exactly `count` finite (positive) numbers."""
    def check(value):
        values = list(value if value is not None else [])
        ok = len(values) == count and all(finite_number(v) for v in values)
        if not ok or (positive_only and any(v <= 0 for v in values)):
            kind = "positive numbers" if positive_only else "finite numbers"
            return f"{what} needs {count} {kind}, got {values}"
        return None
    return check


def _check_stiffness(value):
    values = list(value or [])
    return None if all(finite_number(v) and v >= 0.0 for v in values) else \
        f"joint_impedance.stiffness needs finite numbers >= 0, got {values}"


def _check_posture(value):
    values = list(value or [])
    return None if all(finite_number(v) for v in values) else "nullspace_posture must be finite"


def _gain(field, meaning):
    return Parameter(
        gain_name(JOINT, field), "double", None,
        f"{meaning} of the joint; unset: the model-derived default (gains.py)",
        read_only=False, low=0.0, high=MAX_GAIN)


CONTROLLER_PARAMETERS = ParameterTable([
    Parameter("robot_description", "string", "",
              "URDF XML. Empty: take the robot_description topic (transient_local).",
              read_only=False),
    Parameter("strict_model", "bool", False,
              "Refuse descriptions with physically dubious data (inertias breaking the "
              "triangle inequality, massless moving subtrees, a singular mass matrix, a "
              "floating base joint, missing or odd limits) instead of loading them and "
              "logging each warning once."),
    Parameter("mode", "string", "feedforward_pd",
              "Control law. shadow commands nothing: the model's torque at the measured state "
              "goes to ~/shadow_effort and its error against joint_states' effort to "
              "~/model_error and /diagnostics.", read_only=False, choices=MODES),
    Parameter("joints", "string_array", None,
              "Controlled joints, in the order of the command array. Empty: every moving "
              "joint of the URDF.", check=_check_joints, constraint="distinct, non-empty names"),
    Parameter("state_timeout", "double", 0.1,
              "Seconds without a valid joint state before the safe action.", **positive(10.0)),
    Parameter("effort_scale", "double", 1.0,
              "Fraction of the URDF <limit effort> the command may reach.", **positive(1.0)),
    Parameter("gravity", "double_array", None,
              "Gravity vector [x, y, z] in the root frame, m/s^2. Empty: the model default "
              "[0, 0, -9.81].", read_only=False, check=_check_gravity,
              constraint="empty or 3 finite numbers"),
    Parameter("command_topic", "string", DEFAULT_COMMAND_TOPIC,
              "Float64MultiArray effort topic (JointGroupEffortController input); relative: in "
              "the node's namespace.",
              check=not_empty("command_topic"), constraint="not empty"),
    Parameter("safe_action", "string", "hold", "What to command when joint states stop.",
              choices=SAFE_ACTIONS),
    Parameter("damping", "double", 0.0,
              "gravity_compensation only: damping torque -damping * qd, N m s/rad, every joint.",
              low=0.0, high=MAX_GAIN),
    Parameter("allow_partial_joints_goal", "bool", False,
              "Accept trajectories that name only some of the joints."),
    Parameter("ignore_unknown_joints", "bool", True,
              "Skip joint-state names the robot model does not have (a gripper's fingers in "
              "/joint_states); false refuses such a state, naming the joints."),
    Parameter("fixed_positions", "string_array", None,
              "Positions of model joints that are neither commanded nor in joint_states, as "
              "'joint=value' (rad or m); the others of those use 0. Warned once.",
              check=_check_fixed_positions, constraint="'joint=finite number' entries",
              parse=fixed_positions),
    Parameter("publish_tuning", "bool", True,
              "Publish ~/desired, ~/actual, ~/error, ~/feedforward, ~/feedback."),
    Parameter(friction_name(JOINT, "viscous"), "double", 0.0,
              "Viscous friction b of the joint, N m s/rad (N s/m): b * qd_desired is added to "
              "the tracking modes' feedforward (rbd_identify writes it).", read_only=False,
              low=0.0, high=MAX_GAIN),
    Parameter(friction_name(JOINT, "coulomb"), "double", 0.0,
              "Coulomb friction f_c of the joint, N m (N): f_c * tanh(qd_desired / "
              "friction.epsilon) is added to the tracking modes' feedforward.", read_only=False,
              low=0.0, high=MAX_GAIN),
    Parameter("friction.epsilon", "double", FRICTION_EPSILON,
              "Velocity (rad/s, m/s) over which the Coulomb term reaches f_c (tanh).",
              read_only=False, low=0.0, high=10.0, low_open=True),
    Parameter("payload.link", "string", "",
              "Link carrying a payload the URDF does not have. Empty: no payload.",
              read_only=False),
    Parameter("payload.mass", "double", 0.0, "Payload mass, kg.", read_only=False, low=0.0,
              high=MAX_PAYLOAD_MASS),
    Parameter("payload.com", "double_array", None,
              "Payload centre of mass [x, y, z] in the link frame, m. Empty: the link origin.",
              read_only=False, check=finite_numbers_of_length("payload.com", (0, 3)),
              constraint="empty or 3 finite numbers"),
    Parameter("payload.inertia", "double_array", None,
              "Payload inertia about its centre of mass, link frame, kg m^2: [ixx, iyy, izz] or "
              "[ixx, ixy, ixz, iyy, iyz, izz]. Empty: a point mass.", read_only=False,
              check=finite_numbers_of_length("payload.inertia", (0, 3, 6)),
              constraint="empty, 3 or 6 finite numbers"),
    Parameter("allow_nonzero_velocity_at_trajectory_end", "bool", False,
              "Accept trajectories whose last point has a nonzero velocity (JTC's parameter)."),
    Parameter("action_monitor_rate", "double", 20.0,
              "Hz of ~/follow_joint_trajectory feedback, in control time.", **positive(1000.0)),
    Parameter("state_publish_rate", "double", 50.0,
              "Hz of ~/controller_state, in control time.", **positive(1000.0)),
    Parameter("constraints.goal_time", "double", 0.0,
              "Seconds after a goal's last point to get within its goal tolerance; 0: no limit. "
              "Read when a goal arrives.", read_only=False, low=0.0, high=MAX_TOLERANCE),
    Parameter("constraints.stopped_velocity_tolerance", "double", 0.01,
              "Goal velocity tolerance of every joint (rad/s or m/s); 0: not checked. Read when "
              "a goal arrives.", read_only=False, low=0.0, high=MAX_TOLERANCE),
    Parameter(f"constraints.{JOINT}.trajectory", "double", 0.0,
              "Path position tolerance of the joint while a goal runs; 0: not checked. Read "
              "when a goal arrives.", read_only=False, low=0.0, high=MAX_TOLERANCE),
    Parameter(f"constraints.{JOINT}.goal", "double", 0.0,
              "Goal position tolerance of the joint; 0: not checked. Read when a goal arrives.",
              read_only=False, low=0.0, high=MAX_TOLERANCE),
    Parameter("max_state_age", "double", 0.010,
              "Seconds. A joint state older than this when answered (node clock minus header "
              "stamp) softens the feedback until ages stay below it for 0.5 s; late states "
              "that keep coming for 0.2 s (an overload, not a hiccup) also abort the "
              "trajectory and hold the pose (age_guard.py). 0: off. The default is "
              "expected_delay's, the age the default gains keep their margins at; the stamps "
              "must be on the node's clock (use_sim_time with a simulator).", low=0.0, high=10.0),
    Parameter("bandwidth_hz", "double", 8.0,
              "Upper bound of the default gains' bandwidth, Hz; the margins at "
              "expected_state_period and expected_delay decide below it (loop_design.py). Read "
              "at start. At least 0.01 Hz: the design's arithmetic finds no gains below about "
              "1e-9 Hz (kp = (2 pi f)^2 vanishes), and 0.01 Hz (a 16 s time constant) is already "
              "far below any use.", low=0.01, high=1000.0),
    Parameter("damping_ratio", "double", 1.0,
              "Damping ratio of the default gains (gains.py). Read at start.", **positive(100.0)),
    Parameter("expected_state_period", "double", 0.004,
              "Seconds between the joint states the controller answers, as it really runs "
              "(the default: 250 Hz, a Python node on a busy computer). The default gains are "
              "designed in discrete time for it (loop_design.py); bandwidth_hz stays their "
              "upper bound. Read at start.", **positive(1.0)),
    Parameter("expected_delay", "double", 0.010,
              "Seconds from a joint state to the moment its command acts on the drive, as it "
              "really runs. The default gains keep a 45 deg phase margin and a gain margin of 2 "
              "with this delay and expected_state_period (loop_design.py). Read at start.",
              low=0.0, high=1.0),
    Parameter("inertia_scheduling", "bool", True,
              "feedforward_pd scales each default-rule joint's kp and kd by its effective "
              "inertia at the measured pose over the one the default gains were sized on "
              "(inertia_schedule.py): the same margins at every pose, slow modes up to speed. "
              "Joints with gains given keep them. Read at start."),
    Parameter("use_urdf_friction", "bool", True,
              "Add the URDF's <dynamics damping friction> to the tracking modes' feedforward "
              "(damping * qd_desired + friction * tanh(qd_desired / friction.epsilon)), as its "
              "masses are used; a joint's friction.<joint>.* parameters replace its URDF values."),
    Parameter("oscillation.frequency", "double", 5.0,
              "Hz. A joint whose velocity error swings between +-oscillation.velocity with "
              "half-periods shorter than 1 / (2 f) for oscillation.cycles cycles oscillates "
              "(oscillation.py): the controller softens the gains, and aborts the trajectory "
              "and holds if it goes on. 0: off.", low=0.0, high=1000.0),
    Parameter("oscillation.velocity", "double", 0.05,
              "rad/s (m/s): the velocity error a swing must exceed to count (below: noise).",
              **positive(100.0)),
    Parameter("oscillation.cycles", "double", 3.0,
              "Fast cycles in a row that make an oscillation.", low=1.0, high=100.0),
    Parameter("oscillation.energy_growth", "double", 2.0,
              "An oscillation also when, while the desired state is still, the peak error "
              "energy (1/2 d e'^2 + 1/2 Kp e^2) of 5 windows of 0.2 s in a row grows, by this "
              "factor in all. 0: off.", low=0.0, high=1000.0),
    Parameter("oscillation.soften", "double", 0.5,
              "Bandwidth scale applied at each oscillation (Kp -> s^2 Kp, Kd -> s Kd), kept "
              "until the gains or the model change.", low=0.0, high=1.0, low_open=True),
    Parameter("shadow.window", "double", 2.0,
              "Shadow mode: seconds of states over which ~/model_error and /diagnostics report "
              "each joint's RMS and peak model error.", read_only=False, low=0.05, high=600.0),
    Parameter("diagnostics_period", "double", 1.0,
              "Seconds between /diagnostics messages (loop health). 0: no diagnostics.",
              low=0.0, high=60.0),
    Parameter("diagnostics.state_age_warn", "double", 0.005,
              "/diagnostics: WARN when the p99 state age over the last second exceeds this, s.",
              **positive(10.0)),
    Parameter("diagnostics.state_age_error", "double", 0.02,
              "/diagnostics: ERROR when the p99 state age over the last second exceeds this, s.",
              **positive(10.0)),
    Parameter("diagnostics.compute_warn", "double", 0.001,
              "/diagnostics: WARN when the p99 time to answer a state exceeds this, s.",
              **positive(10.0)),
    Parameter("diagnostics.compute_error", "double", 0.005,
              "/diagnostics: ERROR when the p99 time to answer a state exceeds this, s.",
              **positive(10.0)),
    Parameter("robot_compensates_gravity", "bool", False,
              "The robot adds g(q) itself (Franka, KUKA FRI torque mode, UR direct torque): "
              "the published command omits g(q) of the arm and payload; the observer, the "
              "joint-limit bounds and the safe hold keep it; a safe 'zero' publishes zero."),
    Parameter("limits.joint_limits", "bool", True, "Bound every command by the joints' "
              "position and velocity limits as ros2_control's JointSoftLimiter does, about the "
              "torque that holds the joint's velocity, braking on the fastest loop "
              "expected_state_period and expected_delay allow (declare them). Read at start. "
              "Off: nothing keeps a joint off its stop."),
    Parameter("limits.soft_margin", "double", 0.15,
              "rad (m): soft limits this far inside the hard ones (at most 1/4 of the range) "
              "for joints without a URDF <safety_controller>. Read at start.", low=0.0, high=10.0),
    Parameter("limits.torque_rate", "double", 20000.0,
              "N m/s (N/s) per joint: the published command changes by at most this times the "
              "time since the last one (at most 2 expected_state_period), as libfranka's "
              "limitRate (kMaxTorqueRate: 1000, the franka_panda profile's). Default: 20 N m "
              "per ms. Ramps from zero at start. 0: off. Read at start.", low=0.0, high=1.0e7),
    Parameter("ee_link", "string", "",
              "cartesian_impedance: the end-effector link (any URDF link, e.g. tool0); its "
              "origin follows ~/target_pose. Empty: cartesian_impedance is unavailable."),
    Parameter("cartesian_stiffness", "double_array", [1000.0, 1000.0, 1000.0, 10.0, 10.0, 10.0],
              "cartesian_impedance: K, N/m along x, y, z then N m/rad about x, y, z (base axes). "
              "Settable while it runs (variable impedance: ArmClient.send_pose_target's "
              "stiffness): refused, naming the axis, above the fastest loop "
              "expected_state_period and expected_delay allow at the measured pose "
              "(w^2 Lambda_ii); below it, and at start, the loop design softens the modes it "
              "cannot follow.",
              read_only=False, check=_check_numbers(6, "cartesian_stiffness"),
              constraint="6 positive numbers"),
    Parameter("cartesian_damping_ratio", "double", 1.0,
              "cartesian_impedance: damping ratio of every task-space mode (D from Lambda).",
              **positive(10.0)),
    Parameter("nullspace_stiffness", "double", 10.0,
              "cartesian_impedance: posture stiffness in the dynamically consistent nullspace, "
              "N m/rad, every joint.", low=0.0, high=MAX_GAIN),
    Parameter("nullspace_posture", "double_array", None,
              "cartesian_impedance: posture held in the nullspace, one value per controlled "
              "joint. Empty: the pose at activation.", check=_check_posture,
              constraint="empty or finite numbers"),
    Parameter("max_cartesian_error", "double_array", [0.1, 0.5],
              "cartesian_impedance: the pose error is clipped to [translation m, rotation rad].",
              check=_check_numbers(2, "max_cartesian_error"), constraint="2 positive numbers"),
    Parameter("cartesian_filter_time_constant", "double", 0.0,
              "cartesian_impedance: s; > 0: a streamed pose target (a policy, a leader at "
              "5-50 Hz) is followed through an exponential filter of this time constant, with "
              "no rest between targets; 0: each target is a minimum-jerk move from the current "
              "one (a goal at a time). Read at start.", low=0.0, high=10.0),
    Parameter("cartesian_target_timeout", "double", 0.0,
              "cartesian_impedance: s; no pose target for this long: the last one is held "
              "and the log says so once (a stream that stopped); 0: off (a goal at a time). "
              "Read at start.", low=0.0, high=3600.0),
    Parameter("joint_impedance.stiffness", "double_array", [],
              "joint_impedance: K, N m/rad, one for every commanded joint or one per joint "
              "(command order); empty: the model's default kp. At most the fastest loop "
              "expected_state_period and expected_delay allow. Per target: "
              "~/target_joint_stiffness. Read at start.", check=_check_stiffness,
              constraint="finite numbers >= 0"),
    Parameter("joint_impedance.damping_ratio", "double", 1.0,
              "joint_impedance: zeta of D = 2 zeta sqrt(K H_ii(q)). Read at start.",
              **positive(10.0)),
    Parameter("joint_impedance.filter_time_constant", "double", 0.05,
              "joint_impedance: s, the exponential filter of the streamed target; 0: none. "
              "Read at start.", low=0.0, high=10.0),
    Parameter("joint_impedance.max_error", "double", 0.1,
              "joint_impedance: rad (m), the target's distance from the measured position is "
              "clipped to this per joint. Read at start.", **positive(10.0)),
    Parameter("joint_impedance.target_timeout", "double", 0.5,
              "joint_impedance: s without a target before the last one is held (velocity 0). "
              "Read at start.", **positive(60.0)),
    *CONTACT_PARAMETERS,
    _gain("p", "Proportional gain, N m/rad,"),
    _gain("d", "Derivative gain, N m s/rad,"),
    _gain("i", "Integral gain, N m/(rad s),"),
    _gain("i_clamp", "Bound on the integral term, N m,"),
])
_GAIN_TEMPLATES = {gain_name(JOINT, field): core for field, core in GAIN_FIELDS.items()}
